"""Make an agent's text safe to post as the bot: no hidden HTML comments (the bot's own state
markers could be forged, content hidden from readers) and no @mentions that would notify people.
Code is left as written: fenced and indented code blocks and inline code spans are neither rendered
as HTML comments nor as mentions, and a copied snippet must stay exact.

What is code is decided by a CommonMark parser (markdown-it-py, with GitHub's tables), not by
counting backticks: an unbalanced backtick or a double-backtick run is code only where GitHub
would render it as code. The result is parsed again and checked; if anything live is left (a place
the parser's positions could not be mapped back to the text), everything outside code blocks is
neutralised, then everything.

The same parser finds the bot's markers (`markers`): only HTML comments outside code count.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import cast

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline, backtick
from markdown_it.token import Token

ZWSP = "\u200b"
COMMENT = "<!--"
_MENTION = re.compile(r"(?<![\w@/])@(?=[A-Za-z0-9][A-Za-z0-9-]{0,38}\b)")
_OPENER = re.compile(re.escape(COMMENT))
_WHOLE_LINE = (0, 1 << 30)


def defang(text: str) -> str:
    """`text` with every HTML comment opener and @mention outside code made inert."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    code_blocks, code_spans = _code(text, lines)
    for protected in ({**code_spans, **code_blocks}, code_blocks, {}):
        result = "\n".join(_neutralised(line, protected.get(i, ())) for i, line in enumerate(lines))
        tokens = _parse(result)
        if _inert(tokens):
            break
    return _closed(result, tokens)


def close_open_code(text: str) -> str:
    """`text` with a code fence it leaves open closed, so what is appended after it (the
    provenance, the bot's markers) is not swallowed into the code block."""
    return _closed(text, _parse(text))


def markers(body: str) -> list[str]:
    """The HTML comments of a comment body that GitHub would treat as comments: outside code, each
    exactly as written (an HTML block's lines, or an inline comment)."""
    found = []
    for token in _walk(_parse(body or "")):
        if token.type == "html_block":
            found += [line.strip() for line in token.content.splitlines() if line.strip().startswith(COMMENT)]
        elif token.type == "html_inline" and token.content.startswith(COMMENT):
            found.append(token.content)
    return found


# --- what is code ------------------------------------------------------------------------------

def code_columns(text: str, lines: list[str]) -> tuple[dict[int, list], dict[int, list]]:
    """Per line of `text` (split into `lines`): the column ranges that are code, in code blocks
    and in inline code spans, as (start, end) pairs."""
    return _code(text, lines)


def _code(text: str, lines: list[str]) -> tuple[dict[int, list], dict[int, list]]:
    """Per line: the column ranges that are code, in code blocks and in inline code spans."""
    tokens, env = parsed(text)
    blocks: dict[int, list] = {}
    spans: dict[int, list] = {}
    cursor: dict[int, int] = {}  # several table cells share a line
    for token in tokens:
        if token.type in ("fence", "code_block") and token.map:
            for line in range(*token.map):
                blocks[line] = [_WHOLE_LINE]
        elif token.type == "inline" and token.map:
            for line, start, end in _located(token, env.get("code_spans", {}).get(token.content, ()), lines, cursor):
                spans.setdefault(line, []).append((start, end))
    return blocks, spans


def _located(token: Token, ranges: Iterable[tuple[int, int]], lines: list[str],
             cursor: dict[int, int]) -> Iterator[tuple[int, int, int]]:
    """(line, start column, end column) of each code span of an inline token, found by locating
    each of its content lines in the source. A content line not found (tabs expanded, escapes in
    table cells) gets no protection: it is neutralised in full, which is only ever safer."""
    offset = 0
    for j, content in enumerate(token.content.split("\n")):
        line = cast(list[int], token.map)[0] + j
        column = lines[line].find(content, cursor.get(line, 0)) if line < len(lines) and content else -1
        if column >= 0:
            cursor[line] = column + len(content)
            for start, end in ranges:
                lo, hi = max(start, offset), min(end, offset + len(content))
                if lo < hi:
                    yield line, column + lo - offset, column + hi - offset
        offset += len(content) + 1


def _neutralised(line: str, protected: Sequence[tuple[int, int]]) -> str:
    """The line with a zero-width space breaking each comment opener and mention outside the
    protected column ranges."""
    cuts = [m.start() + 2 for m in _OPENER.finditer(line)]
    cuts += [m.start() + 1 for m in _MENTION.finditer(line)]
    cuts = sorted(at for at in cuts if not any(start <= at - 1 < end for start, end in protected))
    if not cuts:
        return line
    pieces, last = [], 0
    for at in cuts:
        pieces += [line[last:at], ZWSP]
        last = at
    return "".join(pieces) + line[last:]


def _inert(tokens: list[Token]) -> bool:
    """Nothing in the parsed text is a live HTML comment or a raw mention."""
    for token in _walk(tokens):
        if token.type in ("html_block", "html_inline") and COMMENT in token.content:
            return False
        if token.type == "text" and _MENTION.search(token.content):
            return False
    return True


def _closed(text: str, tokens: list[Token]) -> str:
    last = tokens[-1] if tokens else None
    if last is None or last.type != "fence" or last.level != 0 or _fence_closed(text, last):
        return text
    return f"{text}\n{last.markup}"


def _fence_closed(text: str, fence: Token) -> bool:
    lines = text.split("\n")
    first, end = cast(list[int], fence.map)
    if end - 1 <= first or end > len(lines):
        return False
    closing = lines[end - 1].strip()
    return len(closing) >= len(fence.markup) and set(closing) == {fence.markup[0]}


# --- the parser --------------------------------------------------------------------------------

@functools.cache
def _parser() -> MarkdownIt:
    """CommonMark with GitHub's tables, recording where each inline code span is (markdown-it
    keeps no positions for inline tokens)."""
    md = MarkdownIt("commonmark").enable("table")

    def recording_backtick(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        matched = backtick(state, silent)
        if matched and not silent and len(state.tokens) > count and state.tokens[-1].type == "code_inline":
            state.env.setdefault("code_spans", {}).setdefault(state.src, set()).add((start, state.pos))
        return matched

    md.inline.ruler.at("backticks", recording_backtick)
    return md


@functools.lru_cache(maxsize=4)
def parsed(text: str) -> tuple[list[Token], dict]:
    """The tokens of `text` and the parse's env (where its code spans are); the last few are kept,
    as the renderer reads the same text for its code, its check and its open fence. Read only."""
    env: dict = {}
    return _parser().parse(text, env), env


def _parse(text: str) -> list[Token]:
    return parsed(text)[0]


def _walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)
