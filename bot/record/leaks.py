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
every alignment) to find token shapes whose value nobody told us.
"""
from __future__ import annotations

import base64
import binascii
import bisect
import functools
import html
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from urllib.parse import quote, unquote

MASK = "[redacted]"
BLOCK_MASK = "[redacted: this text carried a secret in an encoded form]"
MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
MIN_FRAGMENT = 10  # a shorter run of a secret could be an ordinary word
FRAGMENT = 16  # a run this long of any secret is a leak (or half the secret, if that is less)
PIECE = 8  # characters per sampled piece

# Token shapes that must never leave even when we were not told the value.
SHAPES = {
    "a GitHub token": r"gh[pousr]_[A-Za-z0-9_]{20,}|github_pat_[A-Za-z0-9_]{20,}",
    "an Anthropic key": r"sk-ant-[A-Za-z0-9_-]{20,}",
    "an OpenAI-style key": r"sk-[A-Za-z0-9_-]{32,}",
    "a Google API key": r"AIza[0-9A-Za-z_-]{35}",
    "a Google OAuth token": r"ya29\.[0-9A-Za-z_-]{20,}|1//0[0-9A-Za-z_-]{30,}",
}
_ALTERNATIVES = "|".join(f"(?P<s{i}>{pattern})" for i, pattern in enumerate(SHAPES.values()))
_SHAPE_NAMES = {f"s{i}": name for i, name in enumerate(SHAPES)}
TOKEN_SHAPES = re.compile(rf"\b(?:{_ALTERNATIVES})")
_DECODED_SHAPES = re.compile(_ALTERNATIVES.encode())  # decoded bytes: no word boundary to rely on

# Characters that render as nothing: Unicode's format characters (Cf) and the fillers and
# selectors that display blank. tests/credentials/test_leak_scan.py checks Cf is complete.
INVISIBLE = ("\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
             "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
             "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
             "\U0001d173-\U0001d17a\U000e0000-\U000e007f\U000e0100-\U000e01ef")


@dataclass(frozen=True)
class Finding:
    start: int  # where in the scanned text
    end: int
    what: str  # "a secret of this run" or a token shape's name; never the value
    how: str  # the encoding it was found in


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


# --- secrets -> needles ------------------------------------------------------------------------

def _exact_variants(values: tuple[str, ...], searched: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(form, how) pairs, leaving out those the views find by themselves for the `searched` units."""
    variants: dict[str, str] = {}
    for value in values:
        value = (value or "").strip()
        if len(value) < MIN_SECRET_LENGTH:
            continue
        for unit in [value, *_lines(value), *_json_tokens(value)]:
            found_by_views = unit in searched
            forms = {unit: "verbatim", **_encoded_forms(unit)}
            for form, how in forms.items():
                if not (found_by_views and how in _VIEWS_FIND):
                    variants.setdefault(form, how)
    return sorted(((v, how) for v, how in variants.items() if len(v) >= MIN_SECRET_LENGTH),
                  key=lambda item: len(item[0]), reverse=True)


_VIEWS_FIND = ("verbatim", "base64-encoded", "JSON-escaped")


def _lines(value: str) -> list[str]:
    """Multi-line secrets (PEM keys, auth.json) leak line by line."""
    return [line.strip() for line in value.splitlines() if len(line.strip()) >= 16] if "\n" in value else []


def _encoded_forms(value: str) -> dict[str, str]:
    """base64 (standard and URL-safe) at each byte alignment, so the value is found inside a
    longer encoded string too (`user:token` in a Basic header); JSON- and URL-escaped."""
    forms = {json.dumps(value)[1:-1]: "JSON-escaped", quote(value, safe=""): "URL-encoded"}
    for core in _aligned(value.encode(), base64.b64encode, 3, 4):
        forms.setdefault(core, "base64-encoded")
        forms.setdefault(core.translate(_URLSAFE), "base64-encoded")
    forms.pop(value, None)
    return forms


def _aligned(raw: bytes, encode: Callable[[bytes], bytes], block: int, chars: int) -> list[str]:
    """The encoding of `raw` preceded by 0..block-1 other bytes, cut to the characters that depend
    on `raw` alone: whatever surrounds the secret, one of these is inside its encoding."""
    cores = []
    for shift in range(block):
        encoded = encode(b"\0" * shift + raw).decode()
        start = -(-chars * shift // block)
        cores.append(encoded[start:chars * (shift + len(raw)) // block])
    return cores


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
_FROM_URLSAFE = str.maketrans("-_", "+/")


def _random_looking(unit: str) -> bool:
    """Runs of a secret are only searched for when the secret looks like a key (a single word with
    letters and digits): a run of `the-database-password` is ordinary prose."""
    return (len(unit) >= MIN_FRAGMENT and not unit.startswith(("{", "["))
            and not any(c.isspace() for c in unit)
            and any(c.isdigit() for c in unit) and any(c.isalpha() for c in unit)
            and len(_skeleton_of(unit)) >= MIN_FRAGMENT)


def _least(length: int) -> int:
    """The shortest run of a secret of `length` characters that counts as leaking it."""
    return min(length, max(MIN_FRAGMENT, min(FRAGMENT, -(-length // 2))))


@dataclass(frozen=True)
class _Needle:
    text: str
    least: int  # in characters of the view
    how: str


def _fragment_needles(unit: str) -> dict[str, list[_Needle]]:
    """Per view: the forms of `unit` whose long runs count as a leak. (base32 is found by decoding
    the text's base32-looking runs and looking for the raw secret in them.)"""
    raw, skeleton = unit.encode(), _skeleton_of(unit)
    k = _least(len(raw))
    needles: dict[str, list[_Needle]] = {"skeleton": [], "hex": [], "base64": [],
                                         "raw": [_Needle(raw.decode("latin-1"), k, "base32-encoded")]}
    least = _least(len(skeleton))  # _random_looking: at least MIN_FRAGMENT letters and digits
    needles["skeleton"] += [_Needle(skeleton, least, "as written, or with characters inserted"),
                            _Needle(skeleton[::-1], least, "reversed")]
    needles["hex"].append(_Needle(raw.hex(), 2 * k, "hex-encoded"))
    needles["base64"] += [_Needle(core, 4 * ((k - 2) // 3), "base64-encoded")
                          for core in _aligned(raw, base64.b64encode, 3, 4)]
    return needles


# --- views -------------------------------------------------------------------------------------

def _ascii_table(keep: bytes, fold: bytes = b"", into: bytes = b"") -> tuple[bytes, bytes]:
    return bytes.maketrans(fold, into), bytes(b for b in range(256) if b not in keep)


_ALNUM = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_UPPER, _LOWER = _ALNUM[10:36], _ALNUM[36:]


@dataclass(frozen=True)
class _ViewKind:
    """What a view keeps of a text. `drop` defines it; `table` (a bytes.translate table and the
    bytes to delete) computes the same thing fast when the text has no `unless`."""

    name: str
    drop: re.Pattern
    table: tuple[bytes, bytes] | None = None
    unless: tuple[bytes, ...] = ()
    fold: Callable[[str], str] = str  # must keep the length (str: unchanged)


_SKELETON = _ViewKind("skeleton", re.compile(r"[^A-Za-z0-9]+"), _ascii_table(_ALNUM, _UPPER, _LOWER),
                      fold=str.lower)
_HEX = _ViewKind("hex", re.compile(r"0[xX]|[^0-9A-Fa-f]+"),
                 _ascii_table(b"0123456789ABCDEFabcdef", b"ABCDEF", b"abcdef"), (b"0x", b"0X"), str.lower)
_BASE64 = _ViewKind("base64", re.compile(r"[^A-Za-z0-9+/_-]+"), _ascii_table(_ALNUM + b"+/-_", b"-_", b"+/"),
                    fold=lambda s: s.translate(_FROM_URLSAFE))
_COMPACT = _ViewKind("compact", re.compile(rf"\A[ \t\r]+|[ \t\r]*\n[ \t\r]*|[ \t\r]+\Z|[{INVISIBLE}]+"))
_INVISIBLE = re.compile(f"[{INVISIBLE}]+")
_VIEW_KINDS = {kind.name: kind for kind in (_SKELETON, _HEX, _BASE64)}


def _skeleton_of(text: str) -> str:
    return _View(text, _SKELETON).value


class _View:
    """`text` seen through a kind: `value` is what is searched, `original` maps a span of it back."""

    def __init__(self, text: str, kind: _ViewKind):
        self.text, self.kind = text, kind
        self.value = self._value()
        self._starts: tuple[list[int], list[int]] | None = None

    def _value(self) -> str:
        kind = self.kind
        if kind.table is not None:
            data = self.text.encode("ascii", "replace")  # one byte per character: '?' is dropped
            if not any(marker in data for marker in kind.unless):
                return data.translate(*kind.table).decode("ascii")
        elif kind is _COMPACT:
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


# --- the scanner -------------------------------------------------------------------------------

class _Grams:
    """Every `width`-character piece of some needles. Any run of `least` characters of a needle in
    a text covers a whole piece starting at a multiple of `step`, so sampling the text there finds
    it: one dictionary lookup per `step` characters, whatever the number of secrets."""

    def __init__(self, needles: list[_Needle]):
        least = min(needle.least for needle in needles)
        self.width = max(4, min(PIECE, least - 4))
        self.step = least - self.width + 1
        self.pieces: dict[str, list[tuple[_Needle, int]]] = {}
        for needle in needles:
            for offset in range(len(needle.text) - self.width + 1):
                self.pieces.setdefault(needle.text[offset:offset + self.width], []).append((needle, offset))

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
        units = sorted({unit for value in secrets for unit in _units(value)})
        self.exact = _exact_variants(secrets, frozenset(units))
        needles: dict[str, list[_Needle]] = {}
        for unit in units:
            for view, found in _fragment_needles(unit).items():
                needles.setdefault(view, []).extend(found)
        self.grams = {view: _Grams(found) for view, found in needles.items() if found}

    def find(self, text: str) -> list[Finding]:
        found = [Finding(i, i + len(variant), "a secret of this run", how)
                 for variant, how in self.exact for i in _occurrences(text, variant)]
        if len(text) < MIN_FRAGMENT:
            return found
        compact = _View(text, _COMPACT)
        found += _shapes(text, compact)
        for name, kind in _VIEW_KINDS.items():
            view = _View(text, kind)
            if name in self.grams:
                found += [Finding(*view.original(start, end), "a secret of this run", how)
                          for start, end, how in self.grams[name].runs(view.value)]
            found += _decoded_shapes(view)
        return found + self._base32(compact)

    def _base32(self, compact: _View) -> list[Finding]:
        """Token shapes and secrets in the base32-looking runs of the text."""
        found = []
        for start, run_end, decoded in _base32_runs(compact.value):
            for s, e, what, how in self._in_bytes(decoded, "base32-encoded"):
                end = run_end if e == len(decoded) else start + -(-e // 5) * 8  # with the partial tail
                found.append(Finding(*compact.original(start + s // 5 * 8, end), what, how))
        return found

    def _in_bytes(self, data: bytes, how: str) -> list[tuple[int, int, str, str]]:
        found = [(m.start(), m.end(), _shape_name(m), how) for m in _shapes_in_bytes(data)]
        if "raw" in self.grams:
            runs = self.grams["raw"].runs(data.decode("latin-1"))
            found += [(s, e, "a secret of this run", how) for s, e, _ in runs]
        return found


@functools.lru_cache(maxsize=64)
def _scanner(secrets: tuple[str, ...]) -> _Scanner:
    """Log lines and comment edits repeat the same secrets: their needles are built once."""
    return _Scanner(secrets)


_JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.([\w-]{16,})")


def _units(value: str) -> list[str]:
    """The parts of a secret whose runs are searched for. A JWT's header and claims are shared
    with every token of its issuer (a run of them is no leak); its signature is what is secret."""
    value = (value or "").strip()
    units = [value, *_lines(value), *_json_tokens(value)]
    units = [jwt.group(1) if (jwt := _JWT.fullmatch(unit)) else unit for unit in units]
    return [unit for unit in units if _random_looking(unit)]


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


# --- token shapes ------------------------------------------------------------------------------

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


def _shapes_in_bytes(data: bytes) -> Iterable[re.Match[bytes]]:
    return _DECODED_SHAPES.finditer(data) if _BYTE_PREFIX.search(data) else ()


def _shapes(text: str, compact: _View) -> list[Finding]:
    """Token shapes as written, with invisible characters or line breaks inside, and reversed."""
    found = [Finding(m.start(), m.end(), _shape_name(m), "verbatim") for m in _shapes_in(text)]
    found += [Finding(*compact.original(m.start(), m.end()), _shape_name(m),
                      "with invisible characters or line breaks inside") for m in _shapes_in(compact.value)]
    backwards, length = compact.value[::-1], len(compact.value)
    found += [Finding(*compact.original(length - m.end(), length - m.start()), _shape_name(m), "reversed")
              for m in _shapes_in(backwards)]
    return found


def _decoded_shapes(view: _View) -> list[Finding]:
    """Token shapes whose value we were not told, in the hex or base64 the view keeps, decoded at
    every alignment."""
    if view.kind is _BASE64:
        block, chars, how = 3, 4, "base64-encoded"
        decode: Callable[[str], bytes] = binascii.a2b_base64
    elif view.kind is _HEX:
        block, chars, how = 1, 2, "hex-encoded"
        decode = bytes.fromhex
    else:
        return []
    found = []
    for offset in range(chars):
        usable = (len(view.value) - offset) // chars * chars
        if usable < 20:
            break
        decoded = decode(view.value[offset:offset + usable])
        found += [Finding(*view.original(offset + m.start() // block * chars,
                                         offset + -(-m.end() // block) * chars), _shape_name(m), how)
                  for m in _shapes_in_bytes(decoded)]
    return found


_NOT_BASE32 = bytes.maketrans(bytes(b for b in range(256) if b not in _UPPER + _LOWER + b"234567"),
                              b" " * (256 - 58))
_BASE32_RUN = re.compile(r"[A-Za-z2-7]{24,}")


def _base32_runs(value: str) -> Iterator[tuple[int, int, bytes]]:
    """(start, end of the run, decoded bytes) for each alignment of each run of the base32 alphabet long enough to
    hold a token; the runs are rare, so they are located only when one exists."""
    if max(map(len, value.encode("ascii", "replace").translate(_NOT_BASE32).split()), default=0) < 24:
        return
    for run in _BASE32_RUN.finditer(value):
        letters = run.group().upper()
        for offset in range(8):
            usable = (len(letters) - offset) // 8 * 8
            try:
                yield run.start() + offset, run.end(), base64.b32decode(letters[offset:offset + usable])
            except binascii.Error:
                continue


def _shape_name(match: re.Match) -> str:
    return _SHAPE_NAMES[match.lastgroup or ""]


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
