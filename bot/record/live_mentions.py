"""Where a comment mentions a handle as live text at the start of a line, as GitHub renders it.

GitHub renders comments as CommonMark with its extensions, HTML allowed, and turns an `@login` into
a mention only in rendered text. So what is live is decided by a CommonMark parser (markdown-it-py,
the same parser and preset the defanger uses, with GitHub's tables and strikethrough), not by
scanning lines: a mention counts only in the text of a paragraph or heading (in a list item too),
never in a code span, a fence of any length or kind, indented code, an HTML block or inline HTML
(comments, `<pre>`, `<code>`), a link's text (reference links resolved), a table cell, or a
blockquote (its lazy continuation lines included). The raw HTML is then read in document order
(bot/record/raw_html.py): a mention after a comment left open, or inside an `<a>` or `<code>` the
HTML opened, is none, as in the page GitHub serves.

Only what can matter is parsed: a comment with no line starting with the handle not at all, a
comment of plain paragraphs (`plain`) not at all either, and of the paragraphs only those holding
such a line or raw HTML.

The mention must also start its own source line (spaces or tabs before it only), and the handle is
compared in ASCII: `[A-Za-z0-9-]` letters, case folded only for ASCII, so no Unicode letter (the
Kelvin sign folds to `k`) stands in for one of the handle's. A handle followed by a word character,
`-` or `/` (`@bot-x`, `@bot_x`, `@bot/team`) is another login or a team, not the handle.
"""
from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Iterator

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from bot.record.raw_html import RawHtml

_LINE_START = re.compile(r"[ \t]*@([A-Za-z0-9-]+)(?![\w/-])")
_MARK = "line_start_at"  # a zero-width token where an `@` begins a line of inline text
_LIVE_PARENTS = ("paragraph_open", "heading_open")
_CONSTRUCT_STARTS = "`<["  # where a code span, inline HTML, an autolink or a link begins
_OPENS_INLINE = re.compile(r"[`<\[]")
_NOT_PLAIN_LINE = re.compile(r"^(?![ \t]*$)(?! {0,3}[A-Za-z@])", re.MULTILINE)
# A paragraph's inline parse is quadratic on crafted text (markdown-it-py scans every unclosed `[`
# to the end): a longer one is not parsed; a mention in it counts only before its first `[`, `<`
# or backtick.
MAX_INLINE_CHARS = 4000


def normalised(text: str | None) -> str:
    """The text as the parser reads it: line endings as `\\n`, NUL as U+FFFD."""
    return (text or "").replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")


def live_mentions(text: str, handle: str) -> Iterator[tuple[int, str]]:
    """(line index, the rest of that line) for each line of `normalised(text)` that starts with a
    live mention of `handle`, in order."""
    lines = text.split("\n")
    wanted = handle.lower()
    candidates = {}
    for index, line in enumerate(lines):
        match = _LINE_START.match(line)
        if match and match.group(1).lower() == wanted:
            candidates[index] = line[match.end():]
    if not candidates:  # most comments name no one at a line start: no parse at all
        return
    # the parser's tokens come in source order, as do the candidates
    live = candidates if plain(text) else _live_lines(text, candidates)
    for index in live:
        yield index, candidates[index]


def plain(text: str) -> bool:
    """True when `text` is paragraphs of plain lines, where every line-start mention is live:
    each line is blank or starts, after at most 3 spaces, with an ASCII letter or `@` (so none
    opens a fence, heading, quote, list, thematic break, setext underline, table row, indented
    code, HTML block or link definition), and no backtick, `<` or `[` anywhere (so no code span,
    inline HTML, autolink or link opens before a mention). What the parse would find then is
    every candidate: tests/intake/test_live_mentions_shortcut.py holds the two to each other."""
    return _OPENS_INLINE.search(text) is None and _NOT_PLAIN_LINE.search(text) is None


def _live_lines(text: str, candidates: Iterable[int]) -> Iterator[int]:
    """The candidate lines whose first `@` is live inline text of a paragraph or heading, with
    no raw HTML left open around it."""
    ordered = sorted(candidates)
    env: dict = {}  # the link reference definitions, which links anywhere may use
    html = RawHtml()
    open_blocks: list[str] = []
    for token in _blocks().parse(text, env):
        if token.nesting == 1:
            open_blocks.append(token.type)
        elif token.nesting == -1:
            open_blocks.pop()
        elif token.type == "html_block":
            html.feed(token.content)
        elif token.type == "inline" and token.map:
            first, end = token.map
            inside = ordered[bisect.bisect_left(ordered, first):bisect.bisect_left(ordered, end)]
            wanted = {line - first for line in inside} if _live_block(open_blocks) else set()
            yield from (first + offset for offset in _live_offsets(token.content, wanted, env, html))


def _live_block(open_blocks: list[str]) -> bool:
    return bool(open_blocks) and open_blocks[-1] in _LIVE_PARENTS and "blockquote_open" not in open_blocks


def _live_offsets(content: str, offsets: set[int], env: dict, html: RawHtml) -> Iterator[int]:
    """Which of the wanted lines (by offset) of one inline text begin with a live `@`; reads the
    text's raw HTML into `html` on the way."""
    positions = _at_positions(content, offsets)
    first_construct = min((found for char in _CONSTRUCT_STARTS if (found := content.find(char)) >= 0),
                          default=len(content))
    if first_construct == len(content) or len(content) > MAX_INLINE_CHARS:
        # nothing before these could open a span, a tag or a link around them
        yield from (offset for offset, at in positions.items() if at < first_construct and not html.quiet)
        if "<" in content:
            html.feed(content)  # unparsed: HTML inside code spans counts too, which is only stricter
        return
    lines = {at: offset for offset, at in positions.items()}
    links = 0
    for token in _inline_tokens(content, env):
        links += {"link_open": 1, "link_close": -1}.get(token.type, 0)
        if token.type == "html_inline":
            html.feed(token.content)
        elif token.type == _MARK and links == 0 and not html.quiet and token.meta["pos"] in lines:
            yield lines[token.meta["pos"]]


def _at_positions(content: str, offsets: set[int]) -> dict[int, int]:
    """Offset of each wanted content line -> the position of its first `@` in the content."""
    found, position = {}, 0
    for offset, line in enumerate(content.split("\n")):
        stripped = line.lstrip(" \t")
        if offset in offsets and stripped.startswith("@"):
            found[offset] = position + len(line) - len(stripped)
        position += len(line) + 1
    return found


def _inline_tokens(content: str, env: dict) -> list[Token]:
    """The inline text's tokens, with a mark where an `@` the parser reaches begins a line."""
    tokens: list[Token] = []
    md = _inline()
    md.inline.parse(content, md, env, tokens)
    return tokens


def _mark_line_start(state: StateInline, silent: bool) -> bool:
    """Mark an `@` the inline parser reaches as text at the start of a line; consume nothing.
    Code spans, inline HTML and autolinks are consumed whole by their rules, so it never sees
    an `@` inside them; an image's text is parsed apart, into the image's own children."""
    pos = state.pos
    if not silent and state.src[pos] == "@" and not state.src[state.src.rfind("\n", 0, pos) + 1:pos].strip(" \t"):
        state.push(_MARK, "", 0).meta = {"pos": pos}
    return False


def _gfm() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


@functools.cache
def _blocks() -> MarkdownIt:
    """The block structure only: paragraphs keep their text unparsed."""
    return _gfm().disable("inline")


@functools.cache
def _inline() -> MarkdownIt:
    md = _gfm()
    md.inline.ruler.before("text", _MARK, _mark_line_start)
    return md
