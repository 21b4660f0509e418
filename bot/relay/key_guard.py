"""The operator's key never reaches the sandbox through the relay: not in a reply header, not in an
error body that quotes the request (as some gateways do), not in a streamed body.

What counts is what the bot's masking layer knows (adapters/masking/leaks.py): the key verbatim,
with characters inserted, reversed, split across lines, in hex, base64 (any alignment, standard or
URL-safe), base32, percent, HTML-entity or backslash escapes, full-width, and any long run of it.

- `carries(data)`: whether whole bytes (a header value, an error body) carry it: the masking layer's
  own search, behind the gate below.
- `stream()`: a `StreamMask` for a reply body passing piece by piece. Each piece is looked at with
  what is still held of the one before it; where the key is, its bytes are blanked with `*` (the
  length stays, so a sized reply keeps its Content-Length and JSON its shape). A piece whose end
  could be the start of the key (its last characters, in some view, are a run of a needle, or it
  ends in escapes) keeps that end back until the next piece shows what follows, at most HOLD_CAP
  bytes: a key split across pieces is found whole. A piece that ends an event of a stream (a blank
  line) leaves whole, and so does everything else but such an end.

The gate: the masking layer's search costs ~20 ns a byte in Python (a streamed 600 kB answer, 12
ms), so each piece first goes through a gate in C (`bytes.translate` views and `find`): the key's
needles are cut into pieces of GATE characters such that any run the masking layer counts as a leak
holds a whole piece, and the gate also fires on its exact forms, on an escape of a key's character,
of an invisible one or of a full-width letter, and on full-width letters themselves. Only when it
fires does the masking layer's search run (a whole error body skips the gate: `thorough`).

The pieces of a view, and the exact forms, are each looked for in one pass of an Aho-Corasick
automaton (`_Finder`, the Rust `aho-corasick` crate with its SIMD prefilter): a `find` per piece
cost a pass over the view for each of a key's ~200 pieces (8 ms for 256 kB), the automaton one
(0.25 ms). The gate fires on exactly what the `find`s fired on (tests/relay/test_key_guard_gate.py
keeps them as its oracle).
"""
from __future__ import annotations

import base64
import html.entities
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

import ahocorasick_rs

from adapters.masking.leaks import leak_spans
from adapters.masking.needles import FRAGMENT, MIN_SECRET_LENGTH, exact_variants, fragment_needles, secret_units
from adapters.masking.views import BASE64, HEX, INVISIBLE, SKELETON, ViewKind

GATE = 12  # characters of a view per gate piece: a longer piece is found faster, a shorter one in more places
HOLD_CAP = 1024  # the most of a piece's end kept back for the next one
TAIL = 256  # how far back the end of a piece is looked at for a key's beginning
DFA_MOST = 1000  # needles a gate's automaton is a DFA for (see _Finder)
BLANK = ord("*")
# a key and its encodings are written with these (base64 padding aside: Gemini escapes its `=`)
_KEY_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/"
_FULL_WIDTH = (b"\xef\xbc", b"\xef\xbd")  # UTF-8 of U+FF00..U+FF7F, folded to ASCII by the masking layer
_FULL_WIDTH_LEAD = b"\xef"  # their first byte, found at memchr speed (two-byte `find`s cost 0.8 ns a byte each)
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def _hides(code: int) -> bool:
    """Whether an escaped character could be part of a key written to slip past a search: one of a
    key's own characters, an invisible one, a full-width letter (what the masking layer folds)."""
    char = chr(code) if 0 <= code <= 0x10FFFF else ""
    return bool(char) and (char in _KEY_ALPHABET or 0xFF01 <= code <= 0xFF5E or unicodedata.category(char) == "Cf"
                           or bool(_INVISIBLE.match(char)))


_NAMED = frozenset(name.rstrip(";").encode() for name, value in html.entities.html5.items()
                   if len(value) == 1 and name.endswith(";") and _hides(ord(value)))
# per first byte (found at memchr speed): the escapes that begin with it
_CANDIDATES = ((b"\\", re.compile(rb"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2}))")),
               (b"%", re.compile(rb"%([0-9a-fA-F]{2})")),
               (b"&", re.compile(rb"&#[xX]([0-9a-fA-F]{1,6});?|&#([0-9]{1,7});?|&([A-Za-z][A-Za-z0-9]{1,31});")))


def _escapes(data: bytes) -> list[re.Match[bytes]]:
    """The escapes in `data` of a character `_hides` names (a byte search, then a pattern at each
    candidate: JSON and URLs escape other characters, so there are few)."""
    found = []
    for first, candidate in _CANDIDATES:
        if first in data:
            found += [match for match in candidate.finditer(data) if _escape_hides(match)]
    return found


def _escape_hides(found: re.Match[bytes]) -> bool:
    if found.group(0).startswith(b"&"):
        hexa, decimal, name = found.groups()
        return (name in _NAMED) if name else _hides(int(hexa, 16) if hexa else int(decimal))
    return _hides(int(next(group for group in found.groups() if group), 16))


def _view(data: bytes, kind: ViewKind) -> bytes:
    """What the masking layer's view of that kind keeps of `data`, computed in C."""
    assert kind.table is not None
    if kind is HEX and (b"0x" in data or b"0X" in data):
        data = data.replace(b"0x", b"").replace(b"0X", b"")
    return data.translate(*kind.table)


_KINDS = {"skeleton": SKELETON, "base64": BASE64}


def _full_width(data: bytes) -> bool:
    return _FULL_WIDTH_LEAD in data and any(mark in data for mark in _FULL_WIDTH)


class _Finder:
    """Whether any of some byte strings occurs in a text, in one pass whatever their number. A DFA is
    the fastest (0.25 ms for 256 kB and a key's 200 pieces); past DFA_MOST needles (a ChatGPT login's
    tokens make 5,000) it would take 20 MB per relay, where the contiguous NFA takes 2 MB and 1.4x
    the time."""

    def __init__(self, needles: list[bytes]):
        searched = [needle for needle in needles if needle]
        kind = ahocorasick_rs.Implementation.DFA if len(searched) <= DFA_MOST else \
            ahocorasick_rs.Implementation.ContiguousNFA
        self._automaton = ahocorasick_rs.BytesAhoCorasick(searched, implementation=kind) if searched else None
        self._empty = len(searched) < len(needles)  # found even in no bytes, as `b"" in data` is

    def within(self, data: bytes) -> bool:
        if self._empty:
            return True
        return self._automaton is not None and bool(self._automaton.find_matches_as_indexes(data))


@dataclass
class _Needles:
    """Per view: the gate pieces (any counted run holds one) and the needles."""

    pieces: dict[str, list[bytes]] = field(default_factory=dict)
    texts: dict[str, list[bytes]] = field(default_factory=dict)

    def add(self, view: str, text: bytes, least: int) -> None:
        width = min(GATE, least)
        step = max(1, least - width + 1)
        self.pieces.setdefault(view, []).extend(text[at:at + width] for at in range(0, len(text) - width + 1, step))
        self.texts.setdefault(view, []).append(text)

    def run_at_end(self, view: str, value: bytes) -> int:
        """How many of the last characters of `value` are a run of one of the view's needles: the
        run could go on in the next piece, and only the whole of it shows whether it is long enough
        to be a leak."""
        texts = self.texts.get(view, ())
        length = 0
        while length < len(value) and any(value[-length - 1:] in text for text in texts):
            length += 1
        return length


def _needles(secrets: Iterable[str]) -> tuple[_Needles, list[bytes]]:
    """The gate's needles. In the skeleton view (what survives inserted characters, line breaks and
    case): each key-like part of a secret forwards, reversed, in hex (percent escapes of every
    character read as hex there) and in base32 at each alignment. In the base64 view: its base64 at
    each alignment. In the bytes as they are: the masking layer's exact forms (verbatim, JSON- and
    URL-escaped, base64)."""
    needles, exact = _Needles(), []
    for unit in (unit for secret in secrets for unit in secret_units(secret)):
        found = fragment_needles(unit)
        for needle in found["skeleton"] + found["hex"]:
            needles.add("skeleton", needle.text.encode(), needle.least)
        for needle in found["base64"]:
            needles.add("base64", needle.text.encode(), needle.least)
        raw = unit.encode()
        least = 8 * min(len(raw), FRAGMENT) // 5 - 1  # base32 characters a counted run of raw bytes fills
        for shift in range(5):
            encoded = base64.b32encode(b"\0" * shift + raw).decode().lower().rstrip("=")
            needles.add("skeleton", encoded[-(-8 * shift // 5):8 * (shift + len(raw)) // 5].encode(), least)
    for secret in secrets:
        if len((secret or "").strip()) >= MIN_SECRET_LENGTH:
            exact += [form.encode("utf-8", "surrogateescape") for form, _ in exact_variants((secret,))]
    exact = sorted(set(exact), key=len, reverse=True)
    for form in exact:
        needles.add("raw", form, len(form))
    return needles, exact


class KeyGuard:
    def __init__(self, secrets: Iterable[str]):
        self.secrets = tuple(s for s in secrets if s)
        self._needles, self._exact = _needles(self.secrets)
        self._exact_finder = _Finder(self._exact)
        # the exact forms (the "raw" pieces) are looked for in the bytes as they are, above
        self._view_finders = [(_KINDS[name], _Finder(pieces)) for name, pieces in self._needles.pieces.items()
                              if name in _KINDS and pieces]

    def carries(self, data: bytes, *, thorough: bool = False) -> bool:
        """Whether `data` (whole) carries a secret, in any form the masking layer knows; `thorough`:
        the masking layer looks at once, without the gate (a rare, small body)."""
        return bool(data) and (thorough or self._gate(data)) and bool(self.spans(data))

    def might_carry(self, data: bytes) -> bool:
        """False when no part of `data` can carry a secret (the gate stays shut). Bytes joined by line
        breaks: the gate opens on the whole wherever it opens on a part (a substring stays one, in
        the bytes and in every view, which drops the breaks; no escape spans a break)."""
        return self._gate(data)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Byte spans of `data` the masking layer finds a secret (or a token shape) in."""
        text = data.decode("utf-8", "surrogateescape")
        found = leak_spans(text, self.secrets)
        if not found:
            return []
        if text.isascii():
            return found
        return [(len(text[:start].encode("utf-8", "surrogateescape")),
                 len(text[:end].encode("utf-8", "surrogateescape"))) for start, end in found]

    def stream(self) -> StreamMask:
        return StreamMask(self)

    def _gate(self, data: bytes) -> bool:
        if self._exact_finder.within(data) or _full_width(data):
            return True
        if _escapes(data):
            return True
        return any(finder.within(_view(data, kind)) for kind, finder in self._view_finders)

    def held_from(self, data: bytes) -> int:
        """Where the part of `data` that could begin a secret starts (len(data): none of it). A piece
        that ends an event of a stream (a blank line) is passed whole: the next event begins with a
        field name (`data:`), whose letters break a run of the key in every view."""
        if data.endswith((b"\n\n", b"\r\n\r\n")):
            return len(data)
        start = max(0, len(data) - TAIL)
        tail = data[start:]
        cut = len(data)
        escape = _last_escape_run(tail)
        if escape is not None:
            cut = start + escape
        for name in self._needles.texts:
            kind = _KINDS.get(name)
            view = tail if kind is None else _view(tail, kind)
            run = self._needles.run_at_end(name, view)
            if run:
                cut = min(cut, len(data) - run if kind is None else start + _kept_from(tail, kind, run))
        return max(cut, len(data) - HOLD_CAP)


def _last_escape_run(tail: bytes) -> int | None:
    """Where a run of escapes at the end of `tail` begins (with key characters between them)."""
    matches = sorted(_escapes(tail), key=lambda match: match.start())
    if not matches or len(tail) - matches[-1].end() > GATE:
        return None
    begin = matches[-1].start()
    for match in reversed(matches[:-1]):
        if begin - match.end() > GATE:
            break
        begin = match.start()
    return begin


def _kept_from(tail: bytes, kind: ViewKind, count: int) -> int:
    """Where, in `tail`, the last `count` characters its view keeps begin."""
    at = len(tail)
    while count and at:
        at -= 1
        if _view(tail[at:at + 1], kind):
            count -= 1
    return at


class StreamMask:
    """Blanks a secret in a body passing piece by piece; see the module docstring."""

    def __init__(self, guard: KeyGuard):
        self._guard = guard
        self._held = b""
        self.found = 0  # pieces in which a secret was blanked

    def feed(self, piece: bytes) -> bytes:
        if not piece:
            return b""
        window = self._held + piece if self._held else piece
        window = self._blanked(window)
        cut = self._guard.held_from(window)
        self._held = window[cut:]
        return window[:cut]

    def close(self) -> bytes:
        rest, self._held = self._held, b""
        return rest

    def _blanked(self, window: bytes) -> bytes:
        if not self._guard._gate(window):
            return window
        spans = self._guard.spans(window)
        if not spans:
            return window
        self.found += 1
        out = bytearray(window)
        for start, end in spans:
            out[start:end] = bytes([BLANK]) * (end - start)
        return bytes(out)
