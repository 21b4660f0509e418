"""Token shapes that must never leave even when the bot was not told the value, found as
written, with invisible characters or line breaks inside, reversed, and decoded from the hex,
base64 and base32 a text carries (for adapters/masking/leaks.py)."""
from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from adapters.masking.views import BASE64, HEX, LOWER, UPPER, View

# Token shapes that must never leave even when we were not told the value.
SHAPES = {
    "a GitHub token": r"gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}",
    "an Anthropic key": r"sk-ant-[A-Za-z0-9_-]{20,}",
    "an OpenAI-style key": r"sk-[A-Za-z0-9_-]{32,}",
    "a Google API key": r"AIza[0-9A-Za-z_-]{35}",
    "a Google OAuth token": r"ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}",
}
SHORTEST_SHAPE = 24  # characters of the shortest token any of SHAPES matches (a ghp_ token); tested
_ALTERNATIVES = "|".join(f"(?P<s{i}>{pattern})" for i, pattern in enumerate(SHAPES.values()))
_SHAPE_NAMES = {f"s{i}": name for i, name in enumerate(SHAPES)}
TOKEN_SHAPES = re.compile(rf"\b(?:{_ALTERNATIVES})")
_DECODED_SHAPES = re.compile(_ALTERNATIVES.encode())  # decoded bytes: no word boundary to rely on


@dataclass(frozen=True)
class Finding:
    start: int  # where in the scanned text
    end: int
    what: str  # "a secret of this run" or a token shape's name; never the value
    how: str  # the encoding it was found in


_PREFIX = re.compile(r"gh[pousr]_|github_pat_|sk-|AIza|ya29\.|1//0")
_BYTE_PREFIX = re.compile(_PREFIX.pattern.encode())


def _shapes_in(text: str) -> list[re.Match]:
    """TOKEN_SHAPES matches, tried only where a token's prefix occurs (a scan with the whole
    expression costs more than all the other views together)."""
    found, end = [], -1
    for prefix in _PREFIX.finditer(text):
        match = TOKEN_SHAPES.match(text, prefix.start()) if prefix.start() >= end else None
        if match:
            found.append(match)
            end = match.end()
    return found


def shapes_in_bytes(data: bytes) -> Iterable[re.Match[bytes]]:
    return _DECODED_SHAPES.finditer(data) if _BYTE_PREFIX.search(data) else ()


def shapes(text: str, compact: View) -> list[Finding]:
    """Token shapes as written, with invisible characters or line breaks inside, and reversed."""
    found = [Finding(m.start(), m.end(), shape_name(m), "verbatim") for m in _shapes_in(text)]
    found += [Finding(*compact.original(m.start(), m.end()), shape_name(m),
                      "with invisible characters or line breaks inside") for m in _shapes_in(compact.value)]
    backwards, length = compact.value[::-1], len(compact.value)
    found += [Finding(*compact.original(length - m.end(), length - m.start()), shape_name(m), "reversed")
              for m in _shapes_in(backwards)]
    return found


def decoded_shapes(view: View) -> list[Finding]:
    """Token shapes whose value we were not told, in the hex or base64 the view keeps, decoded at
    every alignment, each to its last whole byte (a partial last block is decoded too)."""
    if view.kind is BASE64:
        block, chars, how = 3, 4, "base64-encoded"
        decode: Callable[[str], bytes] = _base64_to_last_byte
    elif view.kind is HEX:
        block, chars, how = 1, 2, "hex-encoded"
        decode = _hex_to_last_byte
    else:
        return []
    found, length = [], len(view.value)
    for offset in range(chars):
        if length - offset < 20:
            break
        decoded = decode(view.value[offset:])
        found += [Finding(*view.original(offset + m.start() // block * chars,
                                         min(length, offset + -(-m.end() // block) * chars)), shape_name(m), how)
                  for m in shapes_in_bytes(decoded)]
    return found


def _base64_to_last_byte(value: str) -> bytes:
    """`value` (base64 letters, no padding) decoded to its last whole byte: 6 bits a letter."""
    return binascii.a2b_base64(value + "A" * (-len(value) % 4))[:len(value) * 6 // 8]


def _hex_to_last_byte(value: str) -> bytes:
    return bytes.fromhex(value[:len(value) // 2 * 2])


_NOT_BASE32 = bytes.maketrans(bytes(b for b in range(256) if b not in UPPER + LOWER + b"234567"),
                              b" " * (256 - 58))
BASE32_TOKEN_RUN = 24  # letters: a run this long is decoded whatever the secrets (a token needs more)


@functools.lru_cache(maxsize=8)
def _base32_run(least: int) -> re.Pattern[str]:
    return re.compile(rf"[A-Za-z2-7]{{{least},}}")


def base32_runs(value: str, least: int = BASE32_TOKEN_RUN) -> Iterator[tuple[int, int, bytes]]:
    """(start, end of the run, decoded bytes) for each alignment of each run of the base32 alphabet
    of at least `least` letters, decoded to its last whole byte; the runs are rare, so they are
    located only when one exists."""
    if not has_base32_run(value, least):
        return
    for run in _base32_run(least).finditer(value):
        letters = run.group().upper()
        for offset in range(8):
            tail = letters[offset:]
            if len(tail) < least:
                break
            yield run.start() + offset, run.end(), _base32_to_last_byte(tail)


def _base32_to_last_byte(letters: str) -> bytes:
    """Upper-case base32 `letters` (no padding) decoded to its last whole byte: 5 bits a letter."""
    return base64.b32decode(letters + "A" * (-len(letters) % 8))[:len(letters) * 5 // 8]


def has_base32_run(value: str, least: int = BASE32_TOKEN_RUN) -> bool:
    """Whether `value` holds a run of the base32 alphabet of at least `least` letters."""
    return max(map(len, value.encode("ascii", "replace").translate(_NOT_BASE32).split()), default=0) >= least


def has_token_prefix(value: str) -> bool:
    """Whether a token shape could start somewhere in `value` (`shapes` finds none without)."""
    return _PREFIX.search(value) is not None


def shape_name(match: re.Match) -> str:
    return _SHAPE_NAMES[match.lastgroup or ""]
