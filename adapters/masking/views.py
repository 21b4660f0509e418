"""How the leak scanner looks at a text (adapters/masking/leaks.py): each *view* drops what an encoding
adds (the skeleton keeps letters and digits only, casefolded; the hex view keeps hex digits; the
base64 view keeps the base64 alphabet; the compact view drops line breaks and invisible
characters) and maps a span of what it kept back to the text."""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

# Characters that render as nothing: Unicode's format characters (Cf) and the fillers and
# selectors that display blank. tests/credentials/test_leak_scan.py checks Cf is complete.
INVISIBLE = ("\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
             "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
             "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
             "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef")

URLSAFE = str.maketrans("+/", "-_")
_FROM_URLSAFE = str.maketrans("-_", "+/")


def _ascii_table(keep: bytes, fold: bytes = b"", into: bytes = b"") -> tuple[bytes, bytes]:
    return bytes.maketrans(fold, into), bytes(b for b in range(256) if b not in keep)


_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
UPPER, LOWER = _ALNUM[10:36], _ALNUM[36:]


@dataclass(frozen=True)
class ViewKind:
    """What a view keeps of a text. `drop` defines it; `table` (a bytes.translate table and the
    bytes to delete) computes the same thing fast when the text has no `unless`."""

    name: str
    drop: re.Pattern
    table: tuple[bytes, bytes] | None = None
    unless: tuple[bytes, ...] = ()
    fold: Callable[[str], str] = str  # must keep the length (str: unchanged)


SKELETON = ViewKind("skeleton", re.compile(r"[^A-Za-z0-9]+"), _ascii_table(_ALNUM, UPPER, LOWER),
                      fold=str.lower)
HEX = ViewKind("hex", re.compile(r"0[xX]|[^0-9A-Fa-f]+"),
                 _ascii_table(b"0123456789ABCDEFabcdef", b"ABCDEF", b"abcdef"), (b"0x", b"0X"), str.lower)
BASE64 = ViewKind("base64", re.compile(r"[^A-Za-z0-9+/_-]+"), _ascii_table(_ALNUM + b"+/-_", b"-_", b"+/"),
                    fold=lambda s: s.translate(_FROM_URLSAFE))
COMPACT = ViewKind("compact", re.compile(rf"\A[ \t\r]+|[ \t\r]*\n[ \t\r]*|[ \t\r]+\Z|[{INVISIBLE}]+"))
_INVISIBLE = re.compile(f"[{INVISIBLE}]+")
VIEW_KINDS = {kind.name: kind for kind in (SKELETON, HEX, BASE64)}


def skeleton_of(text: str) -> str:
    return View(text, SKELETON).value


class View:
    """`text` seen through a kind: `value` is what is searched, `original` maps a span of it back."""

    def __init__(self, text: str, kind: ViewKind):
        self.text, self.kind = text, kind
        self.value = self._value()
        self._starts: tuple[list[int], list[int]] | None = None

    def _value(self) -> str:
        kind = self.kind
        if kind.table is not None:
            data = self.text.encode("ascii", "replace")  # one byte per character: '?' is dropped
            if not any(marker in data for marker in kind.unless):
                return data.translate(*kind.table).decode("ascii")
        elif kind is COMPACT:
            joined = "".join(line.strip(" \t\r") for line in self.text.split("\n"))
            return joined if joined.isascii() or not _INVISIBLE.search(joined) else _INVISIBLE.sub("", joined)
        return kind.fold(kind.drop.sub("", self.text))

    def original(self, start: int, end: int) -> tuple[int, int]:
        return self._at(start), self._at(end - 1) + 1

    def _at(self, index: int) -> int:
        if self._starts is None:
            self._starts = self._segments()
        views, origins = self._starts
        k = bisect.bisect_right(views, index) - 1
        return origins[k] + index - views[k]

    def _segments(self) -> tuple[list[int], list[int]]:
        """Where each kept stretch of the text starts, in the view and in the text."""
        views, origins, view, kept = [], [], 0, 0
        for dropped in self.kind.drop.finditer(self.text):
            if dropped.start() > kept:
                views.append(view)
                origins.append(kept)
                view += dropped.start() - kept
            kept = dropped.end()
        if kept < len(self.text):
            views.append(view)
            origins.append(kept)
        return views, origins
