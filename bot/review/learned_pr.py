"""The text of the pull request that writes an approved learned rule into the repository: the
root `REVIEW.md`, or the folder's for a folder rule, so the learned memory becomes reviewed code.
Every part is the renderer's (bot/record/render.py): the rule's wording is agents' text a
maintainer approved, inert in the file, the title and the body alike.

    path = file_path(rule)                       # "tests/REVIEW.md"
    text = file_text(existing, rule)             # the file with the rule added under "## Learned rules"
    title(rule), body(rule, "https://github.com"), branch(rule)   # Rendered

Opened through GitHub's REST API after a maintainer approves the rule: bot/review/learned_pull.py.
"""
from __future__ import annotations

from bot.record import render
from bot.record.render import Rendered
from bot.review.learned import Learned
from bot.review.rules import REVIEW_FILE

HEADING = "## Learned rules"


def file_path(rule: Learned) -> str:
    return f"{rule.folder}/{REVIEW_FILE}" if rule.folder else REVIEW_FILE


def line(rule: Learned) -> Rendered:
    return render.concat(render.outgoing("- "), render.words(rule.wording),
                         render.outgoing(f" (learned rule {rule.id})"))


def file_text(existing: str, rule: Learned) -> str:
    """`existing` with the rule's line added at the end of its "## Learned rules" section (made if missing)."""
    text = existing.rstrip("\n")
    if HEADING not in text.splitlines():
        text = (text + "\n\n" if text else "") + HEADING + "\n"
    return text.rstrip("\n") + "\n" + line(rule) + "\n"


def title(rule: Learned) -> Rendered:
    return render.title(f"Review rule: {rule.wording}")


def body(rule: Learned, github_web: str) -> Rendered:
    threads = [f"{github_web}/{rule.repo}/pull/{e.number}" + (f"#discussion_r{e.comment_id}" if e.comment_id else "")
               for e in rule.evidence]
    return render.concat(
        render.outgoing(f"Adds a review rule a maintainer approved to `{file_path(rule)}`:\n\n"),
        render.quote(rule.wording),
        render.outgoing("\n\nWriters declined this kind of finding on these threads:\n\n"
                        + "\n".join(f"- {url}" for url in threads)))


def branch(rule: Learned) -> Rendered:
    return render.branch("bot/review-rules/learned", str(rule.id))
