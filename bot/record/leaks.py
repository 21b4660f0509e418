"""The leak scanner, as the bot's layers use it: `mask` for redaction, `scan` and `describe` for the
gate before an effect. Its one implementation is adapters/masking/leaks.py, at the lowest floor,
so the adapters mask a CLI's stderr with the same function."""
from __future__ import annotations

from adapters.masking.leaks import BLOCK_MASK, MASK, Leak, describe, mask, scan

__all__ = ["BLOCK_MASK", "MASK", "Leak", "describe", "mask", "scan"]
