"""One normaliser and scanner for secrets on their way out of the bot.

Two users share it:

- redaction (`mask`): comments, log records and stored events. A leak whose place in the text is
  known is replaced by the mask; a leak seen only after decoding the text (percent or HTML-entity
  escapes) cannot be mapped back, so the lines carrying it, or the whole text, are replaced.
- the gate (`scan`): before the bot commits, pushes, names a branch or opens a pull request, what is
  about to leave is scanned; a hit refuses the effect and says where and how, never the value.

What counts as a leak: any value of the episode's secrets, and known token shapes, in the
encodings an attacker would use to slip them past a plain search: verbatim, base64 (every
alignment, wrapped or not), base32, hex in either case, URL/percent and HTML-entity escapes,
reversed, with invisible characters inserted, split across lines, and long substrings of a secret.

How: the text is looked at through a few *views* that each drop what an encoding adds (the
skeleton keeps letters and digits only, casefolded; the hex view keeps hex digits; the base64 view
keeps the base64 alphabet). Each secret is turned into *needles* in those alphabets (itself,
reversed, hex, base64 at each alignment), and a needle counts when a long enough run of it appears
in the view. Runs are found by sampling the view every few characters and looking the piece up in
a table of the needles' pieces, so the cost is a few C-speed passes over the text and one lookup
per few characters, whatever the number of secrets. base64, hex and base32 are also decoded (at
every alignment) to find token shapes whose value nobody told us. A short text is first tried on
a pre-filter (`_Scanner.clean`) that proves, from conditions each way needs, that none of them can
report anything: a flooding CLI's progress lines are then passed in a few microseconds.

The views are in views.py, the needles in needles.py, the token shapes in shapes.py. It lives at the
lowest floor so that the adapters (a CLI's stderr) and the bot (bot/record/leaks.py re-exports it) mask
with this one function.
"""
from __future__ import annotations

import functools
import html
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from adapters.masking.needles import MIN_FRAGMENT, Needle, exact_variants, fragment_needles, secret_units
from adapters.masking.shapes import (
    BASE32_TOKEN_RUN,
    SHORTEST_SHAPE,
    Finding,
    base32_runs,
    decoded_shapes,
    has_base32_run,
    has_token_prefix,
    shape_name,
    shapes,
    shapes_in_bytes,
)
from adapters.masking.views import COMPACT, VIEW_KINDS, View, ViewKind

MASK = "[redacted]"
BLOCK_MASK = "[redacted: this text carried a secret in an encoded form]"
PIECE = 8  # characters per sampled piece
SHORT = 1024  # texts up to this long are tried on the pre-filter first (`_Scanner.clean`)
# The fewest characters of a view whose decoding (at its best alignment) holds SHORTEST_SHAPE bytes
_DECODED_ENOUGH = {"base64": -(-SHORTEST_SHAPE // 3) * 4, "hex": 2 * SHORTEST_SHAPE}


@dataclass(frozen=True)
class Leak:
    where: str
    what: str
    how: str

    def __str__(self) -> str:
        return f"{self.what} ({self.how}) in {self.where}"


def mask(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret and token shape it carries, in any form `scan` knows, masked."""
    if not text:
        return text
    scanner = _scanner(tuple(secrets))
    if len(text) <= SHORT and scanner.clean(text):
        return text
    return _masked_everywhere(text, scanner)


def mask_every_view(text: str, secrets: Iterable[str]) -> str:
    """`mask` without the pre-filter: every view looked through, whatever the text (the property
    test's oracle for the pre-filter, tests/credentials/test_leak_prefilter.py)."""
    return _masked_everywhere(text, _scanner(tuple(secrets))) if text else text


def _masked_everywhere(text: str, scanner: _Scanner) -> str:
    text = _masked(text, scanner.find(text))
    hidden = [(first, last) for first, last, decoded in _escaped_blocks(text) if scanner.find(decoded)]
    if not hidden:
        return text
    lines = text.split("\n")
    if hidden == [(0, len(lines) - 1)]:
        return BLOCK_MASK
    for first, last in reversed(hidden):  # found only once decoded: where exactly is unknown
        lines[first:last + 1] = [MASK]
    return "\n".join(lines)


def leak_spans(text: str, secrets: Iterable[str]) -> list[tuple[int, int]]:
    """Where `text` carries a secret or token shape, as sorted (start, end) spans to blank: each one
    found in place, and the whole lines of one seen only once decoded (where exactly is unknown).
    For callers that must keep the text's length (the model relay's streams)."""
    if not text:
        return []
    scanner = _scanner(tuple(secrets))
    spans = [(f.start, f.end) for f in scanner.find(text) if f.start >= 0]
    hidden = [(first, last) for first, last, decoded in _escaped_blocks(text) if scanner.find(decoded)]
    if hidden:
        starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
        ends = [start - 1 for start in starts[1:]] + [len(text)]
        spans += [(starts[first], ends[last]) for first, last in hidden]
    return sorted(spans)


def scan(parts: Mapping[str, str], secrets: Iterable[str]) -> list[Leak]:
    """The leaks in what is about to leave: `parts` maps a description of each part ("the branch
    name") to its text."""
    scanner = _scanner(tuple(secrets))
    leaks: list[Leak] = []
    for where, text in parts.items():
        found = [(f.what, f.how) for f in scanner.find(text)]
        found += [(f.what, f"{f.how}, escaped") for _, _, decoded in _escaped_blocks(text)
                  for f in scanner.find(decoded)]
        leaks.extend(dict.fromkeys(Leak(where, what, how) for what, how in found))
    return leaks


def describe(leaks: list[Leak], limit: int = 3) -> str:
    """One sentence naming where and how (never what the secret is)."""
    listed = "; ".join(str(leak) for leak in leaks[:limit])
    more = f"; and {len(leaks) - limit} more" if len(leaks) > limit else ""
    return f"it would publish a secret: {listed}{more}"


# --- the scanner -------------------------------------------------------------------------------

class _Grams:
    """Every `width`-character piece of some needles. Any run of `least` characters of a needle in
    a text covers a whole piece starting at a multiple of `step`, so sampling the text there finds
    it: one dictionary lookup per `step` characters, whatever the number of secrets."""

    def __init__(self, needles: list[Needle]):
        least = min(needle.least for needle in needles)
        self.width = max(4, min(PIECE, least - 4))
        self.step = least - self.width + 1
        self.pieces: dict[str, list[tuple[Needle, int]]] = {}
        for needle in needles:
            for offset in range(len(needle.text) - self.width + 1):
                self.pieces.setdefault(needle.text[offset:offset + self.width], []).append((needle, offset))

    def sampled(self, value: str) -> bool:
        """Whether any piece sampled from `value` is a needle's: without one, `runs` finds none."""
        width, pieces = self.width, self.pieces
        for at in range(0, len(value) - width + 1, self.step):
            if value[at:at + width] in pieces:
                return True
        return False

    def runs(self, value: str) -> list[tuple[int, int, str]]:
        """(start, end, how) of each long enough run of a needle in `value`."""
        width, pieces = self.width, self.pieces
        hits = [at for at in range(0, len(value) - width + 1, self.step) if value[at:at + width] in pieces]
        runs, seen = [], set()
        for at in hits:
            for needle, offset in pieces[value[at:at + width]]:
                if (needle, at - offset) in seen:  # a long run is sampled many times: extend it once
                    continue
                seen.add((needle, at - offset))
                before = _common_suffix(value, at, needle.text, offset)
                after = _common_prefix(value, at + width, needle.text, offset + width)
                if before + width + after >= needle.least:
                    runs.append((at - before, at + width + after, needle.how))
        return runs


class _Scanner:
    def __init__(self, secrets: tuple[str, ...]):
        units = sorted({unit for value in secrets for unit in secret_units(value)})
        self.exact = exact_variants(secrets, frozenset(units))
        needles: dict[str, list[Needle]] = {}
        for unit in units:
            for view, found in fragment_needles(unit).items():
                needles.setdefault(view, []).extend(found)
        self.grams = {view: _Grams(found) for view, found in needles.items() if found}
        # base32 runs are decoded from the shortest that can hold a secret's least run (5 bits a letter)
        self.base32_least = min([BASE32_TOKEN_RUN, *(-(-needle.least * 8 // 5) for needle in needles.get("raw", []))])

    def find(self, text: str) -> list[Finding]:
        found = [Finding(i, i + len(variant), "a secret of this run", how)
                 for variant, how in self.exact for i in _occurrences(text, variant)]
        if len(text) < MIN_FRAGMENT:
            return found
        compact = View(text, COMPACT)
        found += shapes(text, compact)
        for name, kind in VIEW_KINDS.items():
            view = View(text, kind)
            if name in self.grams:
                found += [Finding(*view.original(start, end), "a secret of this run", how)
                          for start, end, how in self.grams[name].runs(view.value)]
            found += decoded_shapes(view)
        return found + self._base32(compact)

    def clean(self, text: str) -> bool:
        """True only when `mask` would leave `text` as it is, proven with a few passes at C speed:
        a short line (a CLI's progress, a log line) skips the views' decoding at every alignment.
        Each test below is a condition without which one of `find`'s ways (or the decoding of
        escapes) cannot report anything; when any holds, the text goes through all of them."""
        if not text.isascii() or "%" in text or "&" in text or "\\" in text:
            return False  # escapes or compatibility characters: decoded and looked at again
        for variant, _ in self.exact:
            if variant in text:
                return False
        if len(text) < MIN_FRAGMENT:
            return True  # `find` looks for nothing but the exact forms in so short a text
        compact = View(text, COMPACT).value
        if has_token_prefix(text) or has_token_prefix(compact) or has_token_prefix(compact[::-1]):
            return False  # a token shape may start there (as written, compact or reversed)
        if has_base32_run(compact, self.base32_least):
            return False  # decoded at every alignment
        data = text.encode("ascii")
        for name, kind in VIEW_KINDS.items():
            value = _ascii_view(text, data, kind)
            if name in self.grams and self.grams[name].sampled(value):
                return False  # a piece of a secret's needle: its run is measured
            if len(value) >= _DECODED_ENOUGH.get(name, len(value) + 1):
                return False  # long enough to decode into a token shape
        return True

    def _base32(self, compact: View) -> list[Finding]:
        """Token shapes and secrets in the base32-looking runs of the text."""
        found = []
        for start, run_end, decoded in base32_runs(compact.value, self.base32_least):
            for s, e, what, how in self._in_bytes(decoded, "base32-encoded"):
                end = run_end if e == len(decoded) else min(run_end, start + -(-e // 5) * 8)
                found.append(Finding(*compact.original(start + s // 5 * 8, end), what, how))
        return found

    def _in_bytes(self, data: bytes, how: str) -> list[tuple[int, int, str, str]]:
        found = [(m.start(), m.end(), shape_name(m), how) for m in shapes_in_bytes(data)]
        if "raw" in self.grams:
            runs = self.grams["raw"].runs(data.decode("latin-1"))
            found += [(s, e, "a secret of this run", how) for s, e, _ in runs]
        return found


def _ascii_view(text: str, data: bytes, kind: ViewKind) -> str:
    """`View(text, kind).value` for an ASCII `text` (`data`, its bytes), without the object."""
    if kind.table is None or (kind.unless and any(marker in data for marker in kind.unless)):
        return View(text, kind).value
    return data.translate(*kind.table).decode("ascii")


@functools.lru_cache(maxsize=64)
def _scanner(secrets: tuple[str, ...]) -> _Scanner:
    """Log lines and comment edits repeat the same secrets: their needles are built once."""
    return _Scanner(secrets)


def _occurrences(text: str, piece: str) -> Iterator[int]:
    at = text.find(piece)
    while at != -1:
        yield at
        at = text.find(piece, at + 1)


def _common_prefix(a: str, i: int, b: str, j: int) -> int:
    n = 0
    while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
        n += 1
    return n


def _common_suffix(a: str, i: int, b: str, j: int) -> int:
    n = 0
    while i - n > 0 and j - n > 0 and a[i - n - 1] == b[j - n - 1]:
        n += 1
    return n


# --- decoding ----------------------------------------------------------------------------------

_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}|&#?[0-9A-Za-z]+;|\\[ux][0-9A-Fa-f]{2}|[^\x00-\x7f]")
_BACKSLASH_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})")


def _escaped_blocks(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, decoded text) for each stretch of consecutive lines carrying escapes
    (a secret split across them is found too), decoded."""
    if text.isascii() and not any(c in text for c in "%&\\"):
        return []
    lines = text.split("\n")
    escaped = [i for i, line in enumerate(lines)
               if ("%" in line or "&" in line or "\\" in line or not line.isascii()) and _ESCAPE.search(line)]
    blocks: list[list[int]] = []
    for i in escaped:
        if blocks and blocks[-1][1] == i - 1:
            blocks[-1][1] = i
        else:
            blocks.append([i, i])
    decoded = ((first, last, _decoded("\n".join(lines[first:last + 1]))) for first, last in blocks)
    return [(first, last, text) for first, last, text in decoded if text is not None]


def _decoded(text: str) -> str | None:
    """`text` with percent, HTML-entity and backslash escapes undone (nested ones too) and
    compatibility characters (full-width letters) folded; None when that changes nothing."""
    out = text
    for _ in range(3):
        before = out
        if "%" in out:
            out = unquote(out)
        if "&" in out:
            out = html.unescape(out)
        if "\\" in out:
            out = _BACKSLASH_ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), out)
        if out == before:
            break
    if not out.isascii():
        out = unicodedata.normalize("NFKC", out)
    return None if out == text else out


def _masked(text: str, found: list[Finding]) -> str:
    spans = sorted((f.start, f.end) for f in found if f.start >= 0)
    if not spans:
        return text
    out, kept = [], 0
    for start, end in spans:
        if end <= kept:
            continue
        if start > kept:
            out.append(text[kept:start])
            out.append(MASK)
        elif not out:
            out.append(MASK)
        kept = max(kept, end)
    out.append(text[kept:])
    return "".join(out)
