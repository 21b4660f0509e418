"""What GitHub would make act in a text the bot sends: the oracle of the renderer's tests.

It reads the text as GitHub does, from a CommonMark parse with GitHub's tables and strikethrough
(markdown-it-py), then applies GitHub's own passes over the rendered text (outside code): the GFM
extended autolinks (`www.`, `http://`, `https://`, `ftp://`), @mentions and team mentions, and the
closing keywords followed by an issue reference. It is written apart from bot/record/render.py, from
GitHub's rules, so the renderer cannot pass by agreeing with itself.

    acts("[re-authenticate](https://evil.example)")   # ['link re-authenticate -> https://evil.example']
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt
from markdown_it.token import Token

CODE = "\x00"  # where a code span was: its text is inert
# GitHub's MentionFilter: `@login` after a non-word character; a team is `@org/team`
MENTION = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[A-Za-z0-9][\w.-]*)?")
# GFM's extended autolinks; only `www.` gets an href that is not its visible text (`http://` added)
AUTOLINK = re.compile(r"(?i)(?:https?://|ftp://|www\.)[^\s<]+")
CLOSING = re.compile(r"(?i)(?<![A-Za-z0-9_])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?):?\s+"
                     r"(?:#\d|GH-\d|[\w.-]+/[\w.-]+#\d|https?://\S+/(?:issues|pull)/\d)")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])


def acts(markdown: str, image_hosts: tuple[str, ...] = ()) -> list[str]:
    """Everything in `markdown` that would act: a link whose visible text is not its address, an
    image not from `image_hosts`, raw HTML, a mention, a closing keyword with a reference."""
    found: list[str] = []
    for token in _parser().parse(markdown):
        if token.type == "html_block":
            found.append(f"html {token.content.strip()[:60]}")
        elif token.type == "inline":
            found += _inline(token.children or [], image_hosts)
    return found


def _inline(children: list[Token], image_hosts: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    words: list[str] = []
    link: list | None = None  # [href, visible text] while inside a link
    for token in children:
        if token.type == "link_open":
            link = [str(token.attrs.get("href", "")), ""]
        elif token.type == "link_close" and link is not None:
            if link[1] != link[0] and f"mailto:{link[1]}" != link[0]:
                found.append(f"link {link[1]} -> {link[0]}")
            link = None
        elif token.type == "image":
            src = str(token.attrs.get("src", ""))
            if not src.startswith(image_hosts) or not image_hosts:
                found.append(f"image {src}")
        elif token.type == "html_inline":
            found.append(f"html {token.content}")
        elif token.type in ("text", "code_inline"):
            shown = token.content if token.type == "text" else CODE
            words.append(shown)
            if link is not None:
                link[1] += token.content
        elif token.type in ("softbreak", "hardbreak"):
            words.append("\n")
    return found + _in_text("".join(words))


def _in_text(text: str, autolinks: bool = True) -> list[str]:
    found = [f"mention {m.group(0)}" for m in MENTION.finditer(text)]
    found += [f"closing {m.group(0)}" for m in CLOSING.finditer(text)]
    if autolinks:
        found += [f"autolink {m.group(0)}" for m in AUTOLINK.finditer(text) if m.group(0).lower().startswith("www.")]
    return found


def code_texts(markdown: str) -> Iterator[str]:
    """The text of every code span and code block, as a reader sees it."""
    for token in _parser().parse(markdown):
        if token.type in ("fence", "code_block"):
            yield token.content
        for child in token.children or ():
            if child.type == "code_inline":
                yield child.content


def visible(markdown: str) -> str:
    """What a reader sees of `markdown`: its text and code, whitespace runs as one space, without
    the zero-width spaces that break mentions and keywords."""
    shown = []
    for token in _parser().parse(markdown):
        if token.type in ("fence", "code_block", "html_block"):
            shown.append(token.content)
        for child in token.children or ():
            if child.type in ("text", "code_inline", "html_inline"):
                shown.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                shown.append(" ")
        shown.append(" ")
    return " ".join("".join(shown).replace("\u200b", "").split())


def plain_acts(text: str) -> list[str]:
    """What acts in a plain text GitHub does not render as markdown (a commit message, a pull
    request's title): mentions and closing keywords with a reference."""
    return _in_text(text, autolinks=False)
