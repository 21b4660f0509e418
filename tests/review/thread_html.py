"""A pull request's reviews and review threads, as the fake GitHub holds them, rendered to HTML the
way GitHub lays them out (the review's body, then each thread: its file and line, its comments,
"Resolved" when it is), for the screenshots in docs/reviews.md. Markdown is rendered with
markdown-it (GitHub's flavour: tables, strikethrough; HTML comments hidden, `<details>` shown as GitHub does);
a ```suggestion block becomes the "Suggested change" box."""
from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

_SUGGESTION = re.compile(r"^(`{3,})suggestion\n(.*?)\n\1$", re.MULTILINE | re.DOTALL)
_MD = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
_HIDDEN = re.compile(r"<!--.*?-->", re.DOTALL)

CSS = """
body { font: 14px -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; margin: 24px;
       max-width: 880px; }
.box { border: 1px solid #d1d9e0; border-radius: 6px; margin: 0 0 16px; background: #fff; }
.head { background: #f6f8fa; border-bottom: 1px solid #d1d9e0; padding: 8px 16px; border-radius: 6px 6px 0 0; }
.who { font-weight: 600; } .badge { border: 1px solid #d1d9e0; border-radius: 2em; padding: 0 7px;
       font-size: 12px; color: #59636e; margin-left: 4px; }
.body { padding: 8px 16px; } .file { font-family: ui-monospace, monospace; font-size: 12px; }
.comment { border-top: 1px solid #d1d9e0; padding: 8px 16px; }
.resolved { color: #59636e; font-size: 12px; float: right; }
pre { background: #f6f8fa; padding: 8px; border-radius: 6px; overflow-x: auto; }
code { font-family: ui-monospace, monospace; font-size: 85%; background: #eff2f5; padding: .1em .3em;
       border-radius: 4px; } pre code { background: none; padding: 0; }
.suggestion { border: 1px solid #d1d9e0; border-radius: 6px; margin: 8px 0; }
.suggestion .title { background: #f6f8fa; padding: 4px 8px; font-size: 12px; color: #59636e; }
.suggestion pre { background: #dafbe1; margin: 0; border-radius: 0 0 6px 6px; }
details summary { cursor: pointer; color: #59636e; } table { border-collapse: collapse; }
td, th { border: 1px solid #d1d9e0; padding: 4px 8px; }
"""


def markdown(text: str) -> str:
    text = _HIDDEN.sub("", text or "")
    boxes: list[str] = []

    def box(match: re.Match) -> str:
        boxes.append(f'<div class="suggestion"><div class="title">Suggested change</div>'
                     f"<pre><code>{html.escape(match.group(2))}</code></pre></div>")
        return f"\n\nSUGGESTION{len(boxes) - 1}\n\n"
    rendered = _MD.render(_SUGGESTION.sub(box, text))
    for i, made in enumerate(boxes):
        rendered = rendered.replace(f"<p>SUGGESTION{i}</p>", made)
    return rendered


def _author(user: dict) -> str:
    login = html.escape(user.get("login") or "")
    return f'<span class="who">{login}</span>' + ('<span class="badge">bot</span>' if user.get("type") == "Bot" else "")


def review_box(review: dict) -> str:
    return (f'<div class="box"><div class="head">{_author(review["user"])} reviewed</div>'
            f'<div class="body">{markdown(review.get("body") or "")}</div></div>')


def thread_box(comments: list[dict], resolved: bool) -> str:
    top = comments[0]
    flag = '<span class="resolved">✓ Resolved</span>' if resolved else ""
    said = "".join(f'<div class="comment">{_author(c["user"])}{markdown(c["body"])}</div>' for c in comments)
    return (f'<div class="box"><div class="head">{flag}<span class="file">{html.escape(top["path"])}'
            f' line {top.get("line")}</span></div>{said}</div>')


def page(reviews: list[dict], threads: list[tuple[list[dict], bool]], title: str) -> str:
    parts = [review_box(r) for r in reviews] + [thread_box(comments, resolved) for comments, resolved in threads]
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}</title>"
            f"<style>{CSS}</style></head><body>{''.join(parts)}</body></html>")
