"""Hidden content taken out of what people wrote before an agent reads it.

A person reading a GitHub thread sees the rendered markdown. An agent given the raw text would
also read what the rendering hides: HTML comments, invisible and bidi-control characters,
elements marked hidden, a `<details>` with nothing to click on, image alt text, link titles,
attributes, and link reference definitions no link uses (`[//]: # (…)`, the markdown
comment). An instruction hidden there is one nobody in the thread saw, so the agent does not
see it either. Every removal is counted by kind, for the provenance.

    cleaned = clean_markdown(body)     # prose: hidden parts removed
    cleaned.text, cleaned.removed      # Counter({"HTML comment": 1, "invisible character": 3})
    cleaned = clean_plain(log_text)    # code, diffs, logs: invisible characters shown as markers

Code blocks and inline code are shown as written (a reader sees them), but invisible
characters are removed there too.
"""
from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field

COMMENT = "HTML comment"
INVISIBLE = "invisible character"
BIDI = "bidi control"
HIDDEN_ELEMENT = "hidden element"
EMPTY_DETAILS = "collapsed section with an empty summary"
ALT_TEXT = "image alt text"
LINK_TITLE = "link title"
ATTRIBUTE = "hidden attribute"
LINK_DEFINITION = "unused link definition"

BIDI_CHARS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
JOINERS = frozenset("\u200c\u200d")  # shape Indic/Persian words and emoji sequences when between them
VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u08e2\U000110bd\U000110cd")
PRESENTATION = frozenset("\ufe0e\ufe0f")  # text/emoji presentation selectors: harmless, common
EXTRA_INVISIBLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180e\u3164\uffa0")
KEPT_CONTROLS = frozenset("\t\n\r")


@dataclass
class Cleaned:
    text: str
    removed: Counter = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.removed.values())


def is_invisible(char: str) -> bool:
    """A character a rendered page does not show (bidi controls included)."""
    if char in KEPT_CONTROLS or char in PRESENTATION or char in VISIBLE_FORMAT:
        return False
    code = ord(char)
    if char in BIDI_CHARS or char in EXTRA_INVISIBLE:
        return True
    if 0xFE00 <= code <= 0xFE0D or 0xE0100 <= code <= 0xE01EF:  # variation selectors
        return True
    return unicodedata.category(char) in ("Cf", "Cc")


def _kind(char: str) -> str:
    return BIDI if char in BIDI_CHARS else INVISIBLE


def strip_invisible(text: str, removed: Counter) -> str:
    """Remove invisible characters; a joiner between two visible non-ASCII characters stays."""
    out = []
    for i, char in enumerate(text):
        if not is_invisible(char):
            out.append(char)
        elif char in JOINERS and _joins(text, i):
            out.append(char)
        else:
            removed[_kind(char)] += 1
    return "".join(out)


def _joins(text: str, i: int) -> bool:
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    return all(c and ord(c) > 127 and not is_invisible(c) for c in (before, after))


def clean_plain(text: str) -> Cleaned:
    """Code, diffs and logs, shown as they are, with each run of invisible characters replaced by
    a visible marker (GitHub's diff view flags them too), so the agent knows they are there."""
    removed: Counter = Counter()
    out, i = [], 0
    while i < len(text):
        j = i
        while j < len(text) and is_invisible(text[j]):
            j += 1
        if j == i:
            out.append(text[i])
            i += 1
            continue
        run = text[i:j]
        removed.update(_kind(c) for c in run)
        out.append("".join(f"[U+{ord(c):04X}]" for c in run) if len(run) <= 3
                   else f"[{len(run)} invisible characters]")
        i = j
    return Cleaned("".join(out), removed)


# ---------------------------------------------------------------- markdown

_TOKENS = re.compile(
    r"(?P<fence>^[ ]{0,3}(?P<f>`{3,}|~{3,})[^\n]*\n.*?(?:^[ ]{0,3}(?P=f)[`~]*[ \t]*$|\Z))"
    r"|(?P<code>(?P<ticks>`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)(?P=ticks)(?!`))"
    r"|(?P<comment><!--.*?(?:-->|\Z))",
    re.M | re.S)


def clean_markdown(text: str) -> Cleaned:
    """What a reader of the rendered markdown sees (code kept as written)."""
    removed: Counter = Counter()
    text = strip_invisible(text or "", removed)
    used = _used_labels(text)
    out, last = [], 0
    for match in _TOKENS.finditer(text):
        out.append(_clean_prose(text[last:match.start()], removed, used))
        if match.group("comment") is not None:
            removed[COMMENT] += 1
        else:
            out.append(match.group(0))
        last = match.end()
    out.append(_clean_prose(text[last:], removed, used))
    return Cleaned("".join(out), removed)


def _clean_prose(text: str, removed: Counter, used_labels: set[str]) -> str:
    if not text:
        return text
    text = _definitions(text, removed, used_labels)
    text = _entities(text, removed)
    text = _remove_hidden_elements(text, removed)
    text = _remove_empty_details(text, removed)
    text = _markdown_links(text, removed)
    return _TAG.sub(lambda m: _bare_tag(m, removed), text)


_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")


def _entities(text: str, removed: Counter) -> str:
    """`&#8203;` and `&zwj;` render as invisible characters: gone like the characters."""
    def one(match: re.Match) -> str:
        decoded = html.unescape(match.group(0))
        if len(decoded) == 1 and is_invisible(decoded):
            removed[_kind(decoded)] += 1
            return ""
        return match.group(0)
    return _ENTITY.sub(one, text)


# ---------------------------------------------------------------- HTML elements

_ATTRS = r"(?:\s+[^\s\"'>/=]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?)*"
_TAG = re.compile(r"<(?P<end>/?)(?P<name>[A-Za-z][A-Za-z0-9-]*)(?P<attrs>" + _ATTRS + r")\s*(?P<self>/?)>")
_ATTR = re.compile(r"([^\s\"'>/=]+)(?:\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s\"'=<>`]+))?")
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])"
                           r"|opacity\s*:\s*0(?![.\d]*[1-9])", re.I)
VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
KEPT_ATTRS = frozenset(("href", "src", "srcset"))


def _attributes(attrs: str) -> list[tuple[str, str]]:
    return [(name.lower(), html.unescape((value or "").strip("\"'"))) for name, value in _ATTR.findall(attrs)]


def _hides(attrs: str) -> bool:
    for name, value in _attributes(attrs):
        if name == "hidden" or (name == "style" and _HIDING_STYLE.search(value)):
            return True
        if name == "aria-hidden" and value.lower() == "true":
            continue  # hides from screen readers, not from the eye
    return False


def _element_end(text: str, name: str, after: int) -> int:
    """Where the element opened just before `after` ends (its matching close tag, nesting
    counted), or the end of the text when it is never closed, as a browser would take it."""
    depth = 1
    pattern = re.compile(r"<(/?)" + re.escape(name) + r"\b" + _ATTRS + r"\s*/?>", re.I)
    for match in pattern.finditer(text, after):
        depth += -1 if match.group(1) else 1
        if depth == 0:
            return match.end()
    return len(text)


def _remove_hidden_elements(text: str, removed: Counter) -> str:
    pos = 0
    while True:
        match = next((m for m in _TAG.finditer(text, pos) if not m.group("end") and _hides(m.group("attrs"))), None)
        if match is None:
            return text
        name = match.group("name").lower()
        closed = match.group("self") or name in VOID
        end = match.end() if closed else _element_end(text, name, match.end())
        removed[HIDDEN_ELEMENT] += 1
        text, pos = text[:match.start()] + text[end:], match.start()


_DETAILS = re.compile(r"<details\b" + _ATTRS + r"\s*>", re.I)
_SUMMARY = re.compile(r"\s*<summary\b" + _ATTRS + r"\s*>(.*?)</summary\s*>", re.I | re.S)


def _remove_empty_details(text: str, removed: Counter) -> str:
    """A `<details>` whose summary shows nothing has nothing to click on: its content is hidden."""
    pos = 0
    while (match := _DETAILS.search(text, pos)) is not None:
        summary = _SUMMARY.match(text, match.end())
        if summary is None or _visible_text(summary.group(1)):
            pos = match.end()
            continue
        end = _element_end(text, "details", match.end())
        removed[EMPTY_DETAILS] += 1
        text, pos = text[:match.start()] + text[end:], match.start()
    return text


def _visible_text(fragment: str) -> str:
    without_tags = _TAG.sub(lambda m: "x" if m.group("name").lower() == "img" else "", fragment)
    return html.unescape(without_tags).strip()


def _bare_tag(match: re.Match, removed: Counter) -> str:
    """A tag with only the attributes that are seen or followed (href, src); the rest counted."""
    if match.group("end"):
        return match.group(0)
    name = match.group("name")
    kept = []
    for attr, value in _attributes(match.group("attrs")):
        if attr in KEPT_ATTRS:
            kept.append(f'{attr}="{html.escape(value, quote=True)}"')
        elif attr == "alt":
            if not trivial_alt(value):
                removed[ALT_TEXT] += 1
        elif attr == "title":
            if value.strip():
                removed[LINK_TITLE] += 1
        elif value.strip() and attr not in ("width", "height", "align", "open", "dir", "lang"):
            removed[ATTRIBUTE] += 1
    return f"<{name}{''.join(' ' + k for k in kept)}{' /' if match.group('self') else ''}>"


_UPLOAD_ALT = re.compile(
    r"(?:image|img|picture|photo)"
    r"|(?:screenshot|screen shot)[ _-]?[\d .:_()-]*(?:[ap]m)?[\d .:_()-]*(?:\.(?:png|jpe?g))?"
    r"|[\w.() -]{1,60}\.(?:png|jpe?g|gif|webp|svg|bmp|mp4|mov|webm|pdf|txt|log|zip|json|csv)", re.I)


def trivial_alt(alt: str) -> bool:
    """The alt texts GitHub writes for uploads ("image", "Screenshot 2024-05-01 at 12 34 56",
    a file name) hide nothing a person wrote: kept and not counted."""
    alt = re.sub(r"\bat\b", "", alt.strip(), flags=re.I)
    return not alt.strip() or _UPLOAD_ALT.fullmatch(alt.strip()) is not None


# ---------------------------------------------------------------- markdown links

_LINK = re.compile(r"(?P<bang>!?)\[(?P<text>[^\[\]\n]*)\]\(\s*(?P<url><[^<>\n]*>|[^\s()]+(?:\([^\s()]*\)[^\s()]*)*)"
                   r"(?:\s+(?P<title>\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)")


def _markdown_links(text: str, removed: Counter) -> str:
    def one(match: re.Match) -> str:
        label = match.group("text")
        if match.group("title") and match.group("title")[1:-1].strip():
            removed[LINK_TITLE] += 1
        if match.group("bang") and not trivial_alt(label):
            removed[ALT_TEXT] += 1
            label = ""
        return f"{match.group('bang')}[{label}]({match.group('url')})"
    return _LINK.sub(one, text)


_DEFINITION = re.compile(r"^[ ]{0,3}\[(?P<label>[^\]\n]+)\]:[ \t]*(?P<url><[^<>\n]*>|\S+)"
                         r"(?P<title>[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*(?:\n|\Z)", re.M)


def _used_labels(text: str) -> set[str]:
    """Labels that links refer to (`[text][label]`, `[label][]`, `[label]`), definitions aside."""
    body = _DEFINITION.sub("", text)
    used = {label.lower() for label in re.findall(r"\]\[([^\]\n]+)\]", body)}
    return used | {label.lower() for label in re.findall(r"\[([^\]\n]+)\](?![(:])", body)}


def _definitions(text: str, removed: Counter, used: set[str]) -> str:
    """A link reference definition is never shown: its title is dropped, and a definition no link
    uses (`[//]: # (hidden)`, the markdown comment) is dropped whole."""
    def one(match: re.Match) -> str:
        label = match.group("label").strip()
        if label.lower() not in used:
            removed[LINK_DEFINITION] += 1
            return ""
        if match.group("title"):
            removed[LINK_TITLE] += 1
        return f"[{label}]: {match.group('url')}\n"
    return _DEFINITION.sub(one, text)


PLURALS = {COMMENT: "HTML comments", INVISIBLE: "invisible characters", BIDI: "bidi controls",
           HIDDEN_ELEMENT: "hidden elements", EMPTY_DETAILS: "collapsed sections with an empty summary",
           ALT_TEXT: "image alt texts", LINK_TITLE: "link titles", ATTRIBUTE: "hidden attributes",
           LINK_DEFINITION: "unused link definitions"}


def describe(removed: Counter) -> str:
    """'3 (1 HTML comment, 2 invisible characters)' for the provenance."""
    total = sum(removed.values())
    parts = [f"{n} {kind if n == 1 else PLURALS.get(kind, kind)}" for kind, n in removed.most_common() if n]
    return f"{total} ({', '.join(parts)})" if parts else "0"
