"""The text of the pull request that writes an approved learned rule into the repository: the
root `REVIEW.md`, or the folder's for a folder rule, so the learned memory becomes reviewed code.
Every part is the renderer's (bot/record/render.py): the rule's wording is agents' text a
maintainer approved, inert in the file, the title and the body alike.

    path = file_path(rule)                       # "tests/REVIEW.md"
    text = file_text(existing, rule)             # the file with the rule's line put under "## Learned rules"
    without(text, rule)                          # the file without it (the rule moved to another folder)
    emptied(without(text, rule))                 # nothing left: the file goes
    title(rule), body(rule, "https://github.com"), branch(rule)   # Rendered
    branch(rule, after=12)                       # after its pull request #12 merged or closed: a new one

Opened through GitHub's REST API after a maintainer approves the rule: bot/review/learned_pull.py.
"""
from __future__ import annotations

import re

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
    """`existing` with the rule's line: in place of the line it wrote before (an edited rule), else
    added at the end of the "## Learned rules" section (made if missing). Nothing else changes."""
    lines = existing.split("\n")
    mine = [i for i, text in enumerate(lines) if wrote(text, rule)]
    if mine:
        lines[mine[0]] = str(line(rule)) + ("\r" if lines[mine[0]].endswith("\r") else "")  # a CRLF file stays so
        return "\n".join(text for i, text in enumerate(lines) if i not in mine[1:])
    at = next((i for i, text in enumerate(lines) if text.rstrip("\r") == HEADING), None)
    if at is None:
        text = existing.rstrip("\n")
        return (text + "\n\n" if text else "") + HEADING + "\n" + line(rule) + "\n"
    end = at + 1
    while end < len(lines) and not _heading(lines[end]):
        end += 1
    while end > at + 1 and not lines[end - 1].strip():
        end -= 1  # after the section's last line, before the blank lines that end it
    return "\n".join([*lines[:end], str(line(rule)), *lines[end:]])


def _heading(text: str) -> bool:
    return re.match(r"#{1,6}(\s|$)", text) is not None


def without(existing: str, rule: Learned) -> str:
    """`existing` without the rule's line (its folder was edited: the line moves to another file),
    and without the "## Learned rules" heading when nothing is left under it."""
    lines = existing.split("\n")
    kept = [text for text in lines if not wrote(text, rule)]
    if len(kept) == len(lines):
        return existing
    text = "\n".join(_without_empty_section(kept)).rstrip("\n")
    return text + "\n" if text.strip() else ""


def emptied(text: str) -> bool:
    """A file left with nothing in it (the bot made it for a rule that has moved): deleted."""
    return not text.strip()


def _without_empty_section(lines: list[str]) -> list[str]:
    at = next((i for i, text in enumerate(lines) if text.rstrip("\r") == HEADING), None)
    if at is None:
        return lines
    end = at + 1
    while end < len(lines) and not lines[end].strip():
        end += 1
    if end < len(lines) and not _heading(lines[end]):
        return lines  # the section holds other lines: kept
    start = at
    while end == len(lines) and start > 0 and not lines[start - 1].strip():
        start -= 1  # the blank lines before a section that ended the file go with it
    return lines[:start] + lines[end:]


def wrote(text: str, rule: Learned) -> bool:
    """A line of the rule, whatever its wording then: the bot ends each with the rule's id."""
    return text.startswith("- ") and text.removesuffix("\r").endswith(f" (learned rule {rule.id})")


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


def branch(rule: Learned, after: int | None = None) -> Rendered:
    """The rule's branch; `after`: the number of its pull request that was merged or closed, so an
    edit or a retry then gets a branch of its own (the same one however often it is asked)."""
    return render.branch("bot/review-rules/learned", str(rule.id) if after is None else f"{rule.id}-after-{after}")


def is_branch_of(name: str, rule: Learned) -> bool:
    """One of the rule's own branches: the only ones the bot writes to."""
    return name == branch(rule) or bool(re.fullmatch(re.escape(str(branch(rule))) + r"-after-[0-9]{1,18}", name))
