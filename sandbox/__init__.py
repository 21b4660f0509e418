"""Sandboxes for agent CLIs: tier 1 (bubblewrap, the default floor) and tier 0 (process jail).

`select_spawner()` picks the configured tier; `doctor_checks()` lists each floor check
with its verdict for `bot doctor`.
"""
from __future__ import annotations


def select_spawner(tier: int | None = None):
    """The Spawner for `tier` (BOT_SANDBOX_TIER when None): 1 → Tier1Spawner, 0 → Tier0Spawner."""
    from bot import config

    chosen = config.sandbox_tier() if tier is None else tier
    if chosen == 0:
        from sandbox.tier0 import Tier0Spawner
        return Tier0Spawner()
    if chosen == 1:
        from sandbox.tier1 import Tier1Spawner
        return Tier1Spawner()
    raise ValueError(f"unknown sandbox tier {chosen!r} (BOT_SANDBOX_TIER is 0 or 1)")


def doctor_checks() -> list[tuple[str, bool, str]]:
    """Each tier-1 floor check as (name, ok, detail), measured with real probes."""
    from sandbox import preflight
    return preflight.checks()
