"""Remove every secret value from text before it leaves the process (comments, logs, records)."""
from __future__ import annotations

import base64
import re
from typing import Iterable

MASK = "[redacted]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
# Token shapes that must never be posted even when we were not told the value.
_TOKEN_SHAPES = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}|sk-ant-[A-Za-z0-9_-]{20,}"
    r"|sk-[A-Za-z0-9_-]{32,}|AIza[0-9A-Za-z_-]{35})")


def secret_variants(values: Iterable[str]) -> list[str]:
    """Each value and the encodings it commonly leaks in, longest first."""
    variants: set[str] = set()
    for value in values:
        value = (value or "").strip()
        if len(value) < MIN_SECRET_LENGTH:
            continue
        variants.add(value)
        variants.add(base64.b64encode(value.encode()).decode().rstrip("="))
        for line in value.splitlines():  # multi-line secrets (PEM keys, auth.json) leak line by line
            if len(line.strip()) >= 16:
                variants.add(line.strip())
    return sorted(variants, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value (and known token shapes) replaced by a mask."""
    for variant in secret_variants(secrets):
        text = text.replace(variant, MASK)
    return _TOKEN_SHAPES.sub(MASK, text)
