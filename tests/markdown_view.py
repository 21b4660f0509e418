"""How GitHub would see a comment the bot posts, from a CommonMark/GFM parse (markdown-it-py): a
mention or a bare URL counts where it is rendered text; a link, image or HTML wherever
the parser makes one."""
from __future__ import annotations

import re

from markdown_it import MarkdownIt

_MENTION_OR_URL = re.compile(r"@[A-Za-z0-9]|[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.", re.IGNORECASE)
_LIVE_TYPES = {"link_open", "image", "html_inline", "html_block"}


def parts(markdown: str) -> list[tuple[str, str]]:
    """(type, content) of every inline piece of `markdown` as GitHub's parser sees it."""
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    found = []
    for block in md.parse(markdown):
        found += [(block.type, block.content)] if block.type != "inline" else []
        found += [(child.type, child.content) for child in block.children or ()]
    return found


def live(markdown: str) -> list[tuple[str, str]]:
    """The pieces that would do something: a mention or URL in rendered text, a link, an image,
    HTML."""
    return [(kind, content) for kind, content in parts(markdown)
            if kind in _LIVE_TYPES or (kind == "text" and _MENTION_OR_URL.search(content))]


def code_spans(markdown: str) -> list[str]:
    return [content for kind, content in parts(markdown) if kind == "code_inline"]
