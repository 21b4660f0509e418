"""Text someone else wrote (a user's word, a file or branch name, a value from `.github/bot.yml`),
put into the bot's own comments so that it shows as written and does nothing: no mention notifies,
no link or image is live, no HTML or markdown applies, and it stays on one line.

    code("copilot`@org/team`")   # '`` copilot`@org/team` ``': a code span, shown exactly
    text("look at @org/team")    # 'look at \\@<ZWSP>org\\/team': escaped, the mention broken

`code` is for words and names: a CommonMark code span whose fence is one backtick longer than the
longest run of backticks inside, padded with a space when the text starts or ends with a backtick
(the parser strips one space from each side). GitHub neither links mentions nor URLs inside code,
so the word is shown exactly, but for a zero-width space inside `<!--` (no scan of the raw text,
however naive, takes a quoted name for one of the bot's markers).

`text` is for sentences: every ASCII punctuation character is backslash-escaped (no emphasis,
link, HTML or code can start), and since GitHub finds mentions and bare URLs in the rendered text,
a zero-width space follows each `@` and breaks `://` and `www.`, and one breaks each closing keyword
that an issue reference could follow (`fixes \\#12` still renders as `fixes #12`).

`quote` is for a whole message someone wrote (a request the bot quotes): a blockquote whose every
line is `text`, so the lines stay lines and nothing in them is live.

All three drop invisible and bidi-control characters (they could reorder what a reader sees) and turn
any run of whitespace, newlines included, into one space.
"""
from __future__ import annotations

import re
from collections import Counter

from bot.record.hidden import strip_invisible
from bot.record.inert_markdown import break_closing_keywords

ZWSP = "\u200b"
COMMENT, COMMENT_BROKEN = "<!--", f"<!{ZWSP}--"
MAX_CHARS = 200
MAX_QUOTE_LINES = 40
_BACKTICKS = re.compile(r"`+")
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")  # CommonMark's escapable ASCII punctuation
_LINK_STARTS = re.compile(r"(@|:(?=//)|www(?=\.))", re.IGNORECASE)


def code(value: object, limit: int = MAX_CHARS) -> str:
    """`value` as one inline code span, shown exactly (up to `limit` characters)."""
    flat = _one_line(value, limit).replace(COMMENT, COMMENT_BROKEN)
    if not flat:
        return "` `"
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(flat)), default=0))
    pad = " " if flat[0] == "`" or flat[-1] == "`" else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def text(value: object, limit: int = MAX_CHARS) -> str:
    """`value` as inline text that renders as written but starts nothing (up to `limit` characters)."""
    broken = _LINK_STARTS.sub(lambda match: match.group(1) + ZWSP, break_closing_keywords(_one_line(value, limit)))
    return _PUNCTUATION.sub(r"\\\1", broken)


def quote(value: object, limit: int = MAX_CHARS) -> str:
    """`value` as a blockquote of inert lines (each up to `limit` characters, at most
    MAX_QUOTE_LINES of them); a blank line stays a blank line of the quote."""
    lines = ("" if value is None else str(value)).strip().splitlines() or [""]
    shown = [text(line, limit) for line in lines[:MAX_QUOTE_LINES]]
    if len(lines) > MAX_QUOTE_LINES:
        shown.append("…")
    return "\n".join(f"> {line}".rstrip() for line in shown)


def _one_line(value: object, limit: int) -> str:
    visible = strip_invisible("" if value is None else str(value), Counter())
    flat = " ".join(visible.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"
