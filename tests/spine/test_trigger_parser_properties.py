"""Property: the trigger fires iff the CommonMark/GFM renderer shows the mention as live text at the
start of a line. The documents mix fences (backticks and tildes, of several lengths, closed, not
closed or "closed" by a line with text after it), HTML comments (closed, left open, inside `<pre>`),
`<pre>`, `<details>`, `<code>` and `<a>` (closed or left open), quotes and their lazy continuations,
indented code, code spans across lines, links and reference links, lists and mentions spelled
rightly and wrongly. The renderer's view is read from its HTML, not from the parser's tokens."""
from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from bot.intake.grammar import parse

HANDLE = "kbot"
AGENTS = ("claude", "codex")
MENTIONS = ("@kbot", "@KBot", "@\u212abot", "@kbot-x", "@kbots", "@kbot/team", "mail@kbot", "see @kbot")
INDENTS = ("", " ", "   ", "    ", "\t")
LINES = ("", "prose words", "# a title", "- item", "> quoted", "```", "````", "``` not a close", "~~~",
         "~~~~", "<!--", "-->", "a note <!--", "<!-- one line -->", "<pre>", "</pre>", "<details>",
         "</details>", "see `a span", "its end` here", "    indented", "see [a link", "its end][ref] here",
         "[ref]: https://example.com", "[", "<code>", "</code>", "see <code>", "see <a href=x>", "</a>",
         "<a href=x>", "<!-- left open")
LIVE_PARENTS = {"p", "li", "h1", "h2", "h3", "h4", "h5", "h6"}
DEAD_ANCESTORS = {"pre", "code", "a", "blockquote", "table", "textarea"}
_MENTION = re.compile(r"@kbot(?![\w/-])\s*(\S*)", re.IGNORECASE | re.ASCII)


class LiveText(HTMLParser):
    """The words after the first `@kbot` that starts a line of live rendered text."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.line_start = False
        self.found: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag not in ("br", "hr", "img"):
            self.open.append(tag)
        self.line_start = tag in LIVE_PARENTS

    def handle_endtag(self, tag: str) -> None:
        if tag in self.open:  # only its own end tag closes an element (a browser reopens a or code)
            del self.open[len(self.open) - 1 - self.open[::-1].index(tag)]
        self.line_start = False

    def handle_data(self, data: str) -> None:
        if self.found is None and self._live():
            starts = ([0] if self.line_start else []) + [m.end() for m in re.finditer("\n", data)]
            for start in starts:
                if match := _MENTION.match(data, start):
                    self.found = match.group(1)
                    break
        self.line_start = False

    def _live(self) -> bool:
        blocks = [tag for tag in self.open if tag in LIVE_PARENTS]
        return bool(blocks) and not DEAD_ANCESTORS & set(self.open)


def rendered_mention(document: str) -> str | None:
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(document)
    last = html.rfind("<!--")
    if last >= 0 and "-->" not in html[last + 4:]:
        html += "-->"  # a browser ends an unclosed comment at the end of the page
    reader = LiveText()
    reader.feed(html)
    reader.close()
    return reader.found


mention_lines = st.builds(lambda indent, mention: f"{indent}{mention} TASK", st.sampled_from(INDENTS),
                          st.sampled_from(MENTIONS))
documents = st.lists(st.one_of(st.sampled_from(LINES), mention_lines), max_size=14).map(
    lambda lines: "\n".join(line.replace("TASK", f"task{i}") for i, line in enumerate(lines)))


@settings(max_examples=600, deadline=None)
@given(documents)
def test_the_trigger_fires_exactly_where_the_renderer_shows_a_live_mention_at_a_line_start(document):
    command = parse(document, HANDLE, AGENTS)
    fired = command.request.split()[0] if command is not None else None
    assert fired == rendered_mention(document)
