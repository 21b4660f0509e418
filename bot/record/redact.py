"""Remove every secret value from text before it leaves the process (comments, logs, records)."""
from __future__ import annotations

import base64
import contextlib
import functools
import json
import logging
import re
from typing import Iterable
from urllib.parse import quote

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
        variants.update(_encoded_forms(value))
        for line in value.splitlines():  # multi-line secrets (PEM keys, auth.json) leak line by line
            if len(line.strip()) >= 16:
                variants.add(line.strip())
        for token in _json_tokens(value):  # a credential file's tokens leak one at a time
            variants.add(token)
            variants.update(_encoded_forms(token))
    return sorted((v for v in variants if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def _encoded_forms(value: str) -> set[str]:
    """base64 (standard and URL-safe) at each of the three byte alignments, so the value is found
    inside a longer encoded string too (`user:token` in a Basic header); JSON- and URL-escaped."""
    raw = value.encode()
    forms = {json.dumps(value)[1:-1], quote(value, safe="")}
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw).decode()
        start = -(-8 * shift // 6)  # the first character carrying no bits of the padding
        stable = encoded[start:(8 * (shift + len(raw))) // 6]  # none of what follows either
        forms.update({stable, stable.translate(_URLSAFE)})
    return {form for form in forms if form != value}


def _json_tokens(value: str) -> list[str]:
    """The long, space-free strings inside a JSON credential (access and refresh tokens)."""
    if not value.startswith(("{", "[")):
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    found, stack = [], [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) >= 16 and not any(c.isspace() for c in item):
            found.append(item)
    return found


_URLSAFE = str.maketrans("+/", "-_")


@functools.lru_cache(maxsize=64)
def _cached_variants(secrets: tuple[str, ...]) -> list[str]:
    """Log lines and comment edits repeat the same secrets: their variants are computed once."""
    return secret_variants(secrets)


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value (and known token shapes) replaced by a mask."""
    for variant in _cached_variants(tuple(secrets)):
        text = text.replace(variant, MASK)
    return _TOKEN_SHAPES.sub(MASK, text)


# Log lines: the secrets of the jobs running now, plus the token shapes, are masked in every
# record (messages and tracebacks), whichever module logs it.
_running_jobs: dict[int, list[str]] = {}


@contextlib.contextmanager
def masked_in_logs(secrets: list[str]):
    """While the block runs, every value in `secrets` (a list that may grow) is masked in logs."""
    _running_jobs[id(secrets)] = secrets
    try:
        yield
    finally:
        _running_jobs.pop(id(secrets), None)


class LogRedactor(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        secrets = [value for values in list(_running_jobs.values()) for value in values]
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, None
        record.msg, record.args = redact(message, secrets), None
        return True


def install_log_redaction() -> None:
    """Attach the redactor to every handler of the root logger (call after logging is configured)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, LogRedactor) for f in handler.filters):
            handler.addFilter(LogRedactor())
