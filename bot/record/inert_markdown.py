"""Markdown someone else wrote (an agent's answer, a finding, a CLI's error) made inert for the bot's
voice: it reads as written and acts on nothing, neither on a click, nor on merge, nor as a
notification. What stays live is an allowlist: the text, its emphasis, lists, tables, headings and
quotes, and its code, exactly as written. Outside code:

- `[` is escaped: no link, image, reference definition or footnote; a link shows as its text and
  its address, `[re-authenticate](https://evil.example)` as `\\[re-authenticate](`https://evil.example`)`;
- `<` is escaped: no raw HTML (no `<img>`, no `<a href>`, no HTML block) and no `<…>` autolink;
  an HTML comment opener also gets a zero-width space (`<!​--`), as bot/record/defang.py does;
- `&` that starts a character reference is escaped: `&#64;` shows as written, never as `@`;
- a bare `http://`, `https://`, `ftp://` or `www.` address is put in a code span: shown whole, copyable,
  not a link (GitHub links `www.x` to `http://www.x`, which is not what it shows);
- a mention (`@login`, `@org/team`, after any non-word character as GitHub finds them) gets a
  zero-width space after its `@`;
- a closing keyword (close, fix, resolve and their forms) followed by what could be an issue
  reference gets a zero-width space after its first letter: merging closes nothing.

An HTML comment (a forged bot marker) is gone with the `<`, and a code fence left open is closed
(defang.close_open_code), so what the bot appends is not swallowed into it. Code is found by the
CommonMark parser (defang.code_columns). The result is parsed again and
checked; if anything is left that acts (a place the parser's positions could not be mapped), the
whole text is shown as one fenced code block, which is inert and still readable.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence

from markdown_it.token import Token

from bot.record.defang import ZWSP, close_open_code, code_columns, parsed

MAX_CHARS = 200_000  # callers cut far below this; a longer text is cut here first
MAX_PASSES = 4  # a text still changing after this many is shown as a code block
_URL = re.compile(r"(?i)(?:https?://|ftp://|www\.)[^\s<>`\\]*")
_URL_TRAILING = ".,:;!?*_~'\""
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# GitHub's MentionFilter finds `@name` after any non-word character (a `/` or another `@` too) of
# the rendered text, where a `_` may have been emphasis: it counts as no word character here
MENTION = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9])")
CLOSING_WORD = re.compile(r"(?i)(?<![A-Za-z0-9])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?![A-Za-z0-9])")
# what may follow a closing keyword and start an issue reference, markdown between them allowed
REFERENCE_AHEAD = re.compile(r"(?i)[\s:*_~\\\[\]()<>\"'|]{0,20}(?:#|&|gh-|https?://|www\.|[\w.-]+/[\w.-]+#)")
_BACKTICKS = re.compile(r"`+")


def inert_markdown(text: str) -> str:
    """`text` as markdown that shows what it says and acts on nothing (see the module's doc)."""
    text = (text or "")[:MAX_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    result = text
    for _ in range(MAX_PASSES):  # an escape can change what is code (a definition gone): again
        again = _one_pass(result)
        if again == result:
            inert = not acting(result) and not _code_lost(text, result)
            return close_open_code(result) if inert else as_code_block(text)
        result = again
    return as_code_block(text)


def _one_pass(text: str) -> str:
    lines = text.split("\n")
    blocks, spans = code_columns(text, lines)
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))
    closing = _closing_keywords(text)
    return "\n".join(_line(line, [*blocks.get(i, ()), *spans.get(i, ())], fence, closing.get(i, ()))
                     for i, line in enumerate(lines))


def _code_lost(before: str, after: str) -> bool:
    """Whether some code of `before` is no longer code in `after` (an escape turned a link
    definition into a paragraph that took in the indented code under it)."""
    return bool(Counter(_code_texts(before)) - Counter(_code_texts(after)))


def _code_texts(markdown: str) -> Iterator[str]:
    for token in parsed(markdown)[0]:
        if token.type in ("fence", "code_block"):
            yield token.content.rstrip("\n")
        yield from (child.content for child in token.children or () if child.type == "code_inline")


def as_code_block(text: str) -> str:
    """The whole text as one fenced code block no line of it can close."""
    fence = "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def break_closing_keywords(text: str) -> str:
    """Plain text (a title, a commit message, one line of a quote) with a zero-width space in each
    closing keyword that what could be an issue reference follows."""
    cuts = [m.start() + 1 for m in CLOSING_WORD.finditer(text) if reference_may_follow(text, m.end())]
    return insert(text, [(at, at, ZWSP) for at in cuts])


def reference_may_follow(text: str, at: int) -> bool:
    """Whether an issue reference could follow a closing keyword ending at `at`: one starts
    there (markdown between), or nothing does and the next line of the document may hold it."""
    return bool(REFERENCE_AHEAD.match(text, at)) or not text[at:].strip(" \t:*_~\\")


def break_mentions(text: str) -> str:
    return MENTION.sub("@" + ZWSP, text)


# --- one line ----------------------------------------------------------------------------------

def _line(line: str, protected: Sequence[tuple[int, int]], fence: str, closing: Sequence[int]) -> str:
    """The line's edits outside code: addresses into code spans, then escapes and breaks."""
    def free(at: int) -> bool:
        return not any(start <= at < end for start, end in protected)

    edits = []
    for start, end in _addresses(line):
        if free(start) and all(free(at) for at in range(start, end)):
            edits.append((start, end, _code_span(line, start, end, fence)))
    taken = [(start, end) for start, end, _ in edits]
    def open_at(at: int) -> bool:
        return free(at) and not any(start <= at < end for start, end in taken)

    for at, char in enumerate(line):
        if char in "[<" and open_at(at) and not escaped(line, at):
            edits.append((at, at, "\\"))
        if line.startswith("<!--", at) and open_at(at):  # no raw scan, however naive, sees a marker
            edits.append((at + 2, at + 2, ZWSP))
        elif char == "&" and open_at(at) and not escaped(line, at) and _ENTITY.match(line, at):
            edits.append((at, at, "\\"))
    edits += [(m.start() + 1, m.start() + 1, ZWSP) for m in MENTION.finditer(line) if open_at(m.start())]
    edits += [(at, at, ZWSP) for at in closing if open_at(at - 1)]
    return insert(line, edits)


def _addresses(line: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each bare address, without the punctuation GitHub leaves out of a link."""
    for match in _URL.finditer(line):
        end = match.end()
        while end > match.start() and (line[end - 1] in _URL_TRAILING or
                                       (line[end - 1] == ")" and line.count("(", match.start(), end) <
                                        line.count(")", match.start(), end))):
            end -= 1
        if end > match.start():
            yield match.start(), end


def _code_span(line: str, start: int, end: int, fence: str) -> str:
    """The address as a code span; a backslash or backtick just before it must not change the fence."""
    before = ("\\" if escaped(line, start) else "") + (ZWSP if start and line[start - 1] == "`" else "")
    after = ZWSP if end < len(line) and line[end] == "`" else ""
    return f"{before}{fence}{line[start:end]}{fence}{after}"


def escaped(line: str, at: int) -> bool:
    """Whether an odd run of backslashes stands just before `at`."""
    run = 0
    while at - run - 1 >= 0 and line[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def _closing_keywords(text: str) -> dict[int, list[int]]:
    """Per line, the column just after the first letter of each closing keyword that a reference
    could follow (on the same line or the next)."""
    found: dict[int, list[int]] = {}
    for match in CLOSING_WORD.finditer(text):
        if reference_may_follow(text, match.end()):
            line = text.count("\n", 0, match.start())
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1)
            found.setdefault(line, []).append(column + 1)
    return found


def insert(text: str, edits: list[tuple[int, int, str]]) -> str:
    pieces, last = [], 0
    for start, end, new in sorted(edits):
        if start < last:
            continue  # overlapping edits: the first wins
        pieces += [text[last:start], new]
        last = end
    return "".join(pieces) + text[last:]


# --- the check ---------------------------------------------------------------------------------

def acting(markdown: str) -> list[str]:
    """What in `markdown` would still act as GitHub renders it: links, images, raw HTML, and in
    the rendered text a bare address, a mention or a closing keyword before a reference."""
    found = []
    for token in parsed(markdown)[0]:
        if token.type == "html_block":
            found.append("html")
        elif token.type == "inline":
            found += _inline_acting(token.children or [])
    return found


def _inline_acting(children: list[Token]) -> list[str]:
    found, words = [], []
    for token in children:
        if token.type in ("link_open", "image", "html_inline"):
            found.append(token.type)
        elif token.type == "text":
            words.append(token.content)
        elif token.type in ("code_inline", "softbreak", "hardbreak"):
            words.append("\n" if token.type != "code_inline" else " ")
    shown = "".join(words)
    if _URL.search(shown) or MENTION.search(shown) or break_closing_keywords(shown) != shown:
        found.append("text")
    return found
