"""Where a comment mentions a handle as live text at the start of a line, as GitHub renders it.

GitHub renders comments as CommonMark with its extensions, HTML allowed, and turns an `@login` into
a mention only in rendered text. So what is live is decided by a CommonMark parser (markdown-it-py,
the same parser and preset the defanger uses, with GitHub's tables and strikethrough), not by
scanning lines: a mention counts only in the text of a paragraph or heading (in a list item too),
never in a code span, a fence of any length or kind, indented code, an HTML block or inline HTML
(comments, `<pre>`, `<code>`), a link's text, a table cell, or a blockquote (its lazy continuation
lines included).

The mention must also start its own source line (spaces or tabs before it only), and the handle is
compared in ASCII: `[A-Za-z0-9-]` letters, case folded only for ASCII, so no Unicode letter (the
Kelvin sign folds to `k`) stands in for one of the handle's. A handle followed by a word character,
`-` or `/` (`@bot-x`, `@bot_x`, `@bot/team`) is another login or a team, not the handle.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

_LINE_START = re.compile(r"[ \t]*@([A-Za-z0-9-]+)(?![\w/-])")
_MARK = "line_start_at"  # a zero-width token where an `@` begins a line of inline text
_LIVE_PARENTS = ("paragraph_open", "heading_open")


def normalised(text: str | None) -> str:
    """The text as the parser reads it: line endings as `\\n`, NUL as U+FFFD."""
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def live_mentions(text: str, handle: str) -> Iterator[tuple[int, str]]:
    """(line index, the rest of that line) for each line of `normalised(text)` that starts with a
    live mention of `handle`, in order."""
    lines = text.split("\n")
    wanted = handle.lower()
    for index in _line_start_ats(text):
        match = _LINE_START.match(lines[index])
        if match and match.group(1).lower() == wanted:
            yield index, lines[index][match.end():]


def _line_start_ats(text: str) -> Iterator[int]:
    """Source line indexes where live inline text begins a line with `@`."""
    open_blocks: list[str] = []
    for token in _parser().parse(text):
        if token.nesting == 1:
            open_blocks.append(token.type)
        elif token.nesting == -1:
            open_blocks.pop()
        elif token.type == "inline" and token.map and _live_block(open_blocks):
            yield from _marked_lines(token)


def _live_block(open_blocks: list[str]) -> bool:
    return bool(open_blocks) and open_blocks[-1] in _LIVE_PARENTS and "blockquote_open" not in open_blocks


def _marked_lines(inline: Token) -> Iterator[int]:
    """The source lines of an inline token's marks outside links (a link's text is the link)."""
    first_line = (inline.map or (0, 0))[0]
    links = 0
    for child in inline.children or ():
        links += {"link_open": 1, "link_close": -1}.get(child.type, 0)
        if child.type == _MARK and links == 0:
            yield first_line + inline.content.count("\n", 0, child.meta["pos"])


def _mark_line_start(state: StateInline, silent: bool) -> bool:
    """Mark an `@` the inline parser reaches as text at the start of a line; consume nothing.
    Code spans, inline HTML and autolinks are consumed whole by their rules, so it never sees
    an `@` inside them."""
    pos = state.pos
    if not silent and state.src[pos] == "@" and not state.src[state.src.rfind("\n", 0, pos) + 1:pos].strip(" \t"):
        state.push(_MARK, "", 0).meta = {"pos": pos}
    return False


@functools.cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.inline.ruler.before("text", _MARK, _mark_line_start)
    return md
