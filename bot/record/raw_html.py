"""What the raw HTML of a comment leaves open, read in document order as a browser reads the page
GitHub renders: a comment (`<!--` with no `-->` yet hides everything after it, even past the end
of the markdown block that wrote it), or an element in whose text GitHub never finds a mention
(links, code, preformatted text, quotes, scripts).

Only raw HTML counts: markdown text, code spans and code blocks reach the page escaped. A browser
carries an unclosed `<a>` or `<code>` into the following paragraphs; here an element stays open
until its own end tag, whatever closes around it, which is never less strict.
"""
from __future__ import annotations

import re
from collections import Counter

QUIET_ELEMENTS = frozenset({"a", "blockquote", "code", "kbd", "pre", "samp", "tt", "script", "style",
                            "textarea", "template", "noscript", "title", "xmp", "iframe", "svg", "math"})
_MARKUP = re.compile(r"(?P<comment><!--)|<(?P<end>/?)(?P<name>[A-Za-z][A-Za-z0-9-]*)(?P<rest>[^>]*)>")
_COMMENT_END = re.compile(r"--!?>")


class RawHtml:
    def __init__(self) -> None:
        self.in_comment = False
        self.open: Counter[str] = Counter()

    @property
    def quiet(self) -> bool:
        """Whether text here is hidden, or where GitHub finds no mention."""
        return self.in_comment or any(count > 0 for count in self.open.values())

    def feed(self, html: str) -> None:
        """Read one piece of raw HTML, in document order."""
        position = 0
        while position < len(html):
            if self.in_comment:
                end = _COMMENT_END.search(html, position)
                if end is None:
                    return
                self.in_comment, position = False, end.end()
                continue
            markup = _MARKUP.search(html, position)
            if markup is None:
                return
            position = markup.end()
            if markup.group("comment"):
                self.in_comment, position = True, markup.start() + 4
            else:
                self._tag(markup)

    def _tag(self, markup: re.Match) -> None:
        name = markup.group("name").lower()
        if name not in QUIET_ELEMENTS:
            return
        if markup.group("end"):
            self.open[name] = max(0, self.open[name] - 1)
        elif not markup.group("rest").rstrip().endswith("/"):
            self.open[name] += 1
