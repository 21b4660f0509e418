"""The one renderer of every text the bot sends: comments, reviews and their comments, check-run
titles, summaries and annotations, commit messages, branch names, pull request titles and bodies.

Text someone else wrote (an agent, a requester, an issue's author, a file name) is inert here: no
closing keyword but the one the bot means, no live mention, every link shown with its full
address, no image loaded. What the renderer returns is `Rendered`; the senders (bot/github/client.py,
bot/review/post.py, bot/review/checks.py, bot/workspace/effects.py) take nothing else, and the
text the bot composes itself passes `outgoing`, the last gate, on its way out.

    render.markdown(agent_text)        # an answer, a finding, a summary: bot/record/inert_markdown.py
    render.words(issue_title)          # one inert line of markdown (bot/record/inert.py)
    render.code(file_name)             # a code span, shown exactly
    render.quote(request)              # a blockquote of inert lines
    render.title(issue_title)          # a plain one-line title or commit subject
    render.plain(request)              # plain text (a commit message's body)
    render.branch("bot/codex/1", words)  # a branch name: [a-z0-9-] only
    render.closing(12)                 # "Fixes #12": the only closing keyword the bot writes
    render.concat(a, b)                # rendered parts joined, still rendered
    render.outgoing(composed)          # the bot's own markdown, through the last gate
"""
from __future__ import annotations

import re
from collections import Counter

from bot.record import inert
from bot.record.defang import ZWSP, code_columns
from bot.record.hidden import strip_invisible
from bot.record.inert_markdown import (
    CLOSING_WORD,
    break_closing_keywords,
    break_mentions,
    escaped,
    inert_markdown,
    insert,
    reference_may_follow,
)

__all__ = ["ZWSP", "Rendered", "branch", "closing", "code", "concat", "markdown", "outgoing", "plain",
           "quote", "required", "title", "words"]
MAX_TITLE_CHARS = 72
MAX_PLAIN_CHARS = 4_000
MAX_GATE_PASSES = 4
# `@org/team`, with what emphasis could take out of the rendered name (`@o_/t_`) counted in
_TEAM = re.compile(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9][\w.*~-]*/)")
_IMAGE = re.compile(r"!(?=\[)|<(?=img\b)", re.IGNORECASE)


class Rendered(str):
    """Text the renderer produced. Only this module makes one; joining two with `+` or an
    f-string gives a plain `str` again, which a sender refuses: join them with `concat`."""

    __slots__ = ()


def required(text: object) -> Rendered:
    """`text` if the renderer produced it; a sender's guard."""
    if not isinstance(text, Rendered):
        raise TypeError(f"the bot sends only rendered text (bot.record.render), not {type(text).__name__}")
    return text


def markdown(text: str | None) -> Rendered:
    """An agent's or a person's markdown, inert (bot/record/inert_markdown.py)."""
    return text if isinstance(text, Rendered) else Rendered(inert_markdown(text or ""))


def words(value: object, limit: int = inert.MAX_CHARS) -> Rendered:
    return Rendered(inert.text(value, limit))


def code(value: object, limit: int = inert.MAX_CHARS) -> Rendered:
    return Rendered(inert.code(value, limit))


def quote(value: object, limit: int = inert.MAX_CHARS) -> Rendered:
    return Rendered(inert.quote(value, limit))


def title(value: object, limit: int = MAX_TITLE_CHARS) -> Rendered:
    """One plain line (a pull request's title, a commit's subject: GitHub renders no markdown
    there, but finds mentions and closing keywords), cut to `limit` characters with an ellipsis."""
    flat = " ".join(_visible(value).split())
    flat = flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"
    return Rendered(break_closing_keywords(break_mentions(flat)))


def plain(value: object, limit: int = MAX_PLAIN_CHARS) -> Rendered:
    """Plain text of several lines (a commit message's body): no mention, no closing keyword."""
    text = _visible(value)[:limit]
    return Rendered(break_closing_keywords(break_mentions(text)))


def branch(prefix: str, words_: str, limit: int = 40) -> Rendered:
    """`<prefix>-<slug>`: the slug is the words in lower-case letters, digits and dashes."""
    slug = re.sub(r"[^a-z0-9]+", "-", words_.lower()).strip("-")[:limit].rstrip("-") or "change"
    return Rendered(f"{prefix}-{slug}")


def closing(number: int, close: bool = True) -> Rendered:
    """The bot's own link to the issue it was asked from: `Fixes #N` (closes it on merge) or `Refs #N`."""
    return Rendered(f"{'Fixes' if close else 'Refs'} #{int(number)}")


def concat(*parts: Rendered) -> Rendered:
    return Rendered("".join(required(part) for part in parts))


def outgoing(text: str) -> Rendered:
    """The bot's own markdown (its sentences, markers and links, with every part someone else
    wrote already rendered) through the last gate: outside code, no closing keyword before a
    reference (the bot closes an issue only with `closing`, never from a comment), no team
    mention, no image. Rendered text passes as it is."""
    if isinstance(text, Rendered):
        return text
    for _ in range(MAX_GATE_PASSES):  # an escape can change what is code (an HTML block gone): again
        gated = _gated_text(text, protect=True)
        if gated == text:
            return Rendered(text)
        text = gated
    return Rendered(_gated_text(text, protect=False))  # still moving: nothing counts as code


def _gated_text(text: str, protect: bool) -> str:
    lines = text.split("\n")
    blocks, spans = code_columns(text, lines) if protect else ({}, {})
    return "\n".join(_gated(line, [*blocks.get(i, ()), *spans.get(i, ())]) for i, line in enumerate(lines))


def _gated(line: str, protected: list) -> str:
    """The line with, outside the protected columns (code), each team mention, image and closing
    keyword that a reference could follow (here, or on the next line) made inert."""
    def free(at: int) -> bool:
        return not any(start <= at < end for start, end in protected)
    edits = [(m.start() + 1, m.start() + 1, ZWSP) for m in _TEAM.finditer(line) if free(m.start())]
    edits += [(m.start() + 1, m.start() + 1, ZWSP) for m in CLOSING_WORD.finditer(line) if free(m.start())
              and reference_may_follow(line, m.end())]
    for match in _IMAGE.finditer(line):
        at = match.start() + (1 if match.group(0) == "!" else 0)  # escape the `[` or the `<`
        if free(at) and not escaped(line, at):
            edits.append((at, at, "\\"))
    return insert(line, edits)


def _visible(value: object) -> str:
    return strip_invisible("" if value is None else str(value), Counter())
