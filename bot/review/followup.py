"""After a re-review is decided: which earlier findings the agents found fixed, what the review
body says about the earlier findings, and, once it is posted, the fixed threads answered and
resolved and the new findings remembered.

    fixed = fixed_findings(history, [collector.verdicts, …])
    lines = notes(history, sifted, fixed, head)          # for the review body
    await close_fixed(db, thread, history, fixed, head)  # "Fixed in `abc1234`." + resolveReviewThread
    await remember(db, thread, posted, chosen, agents, head, secrets)

A finding counts as fixed when an agent said so (through the resolve_finding review tool, which
refuses it unless its file changed since it was posted) and no agent said it is still present.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from bot.record import inert
from bot.record.redact import redact
from bot.review import memory
from bot.review.fingerprint import of, title_of
from bot.review.history import History, Sifted
from bot.review.memory import Earlier, Posted
from bot.review.post import review_comments
from bot.review.selection import Selection

log = logging.getLogger("bot.review.followup")


def fixed_findings(history: History, verdicts: list[dict[int, str]]) -> list[Earlier]:
    said_fixed = {n for given in verdicts for n, status in given.items() if status == "fixed"}
    still = {n for given in verdicts for n, status in given.items() if status == "still_present"}
    return [e for e in history.open if e.id in said_fixed - still]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def notes(history: History, sifted: Sifted, fixed: list[Earlier], head: str) -> list[str]:
    lines = []
    if not history.change.incremental and history.change.reason:
        lines.append(f"Whole review: {history.change.reason}.")
    if fixed:
        lines.append(f"{_count(len(fixed), 'earlier finding', 'earlier findings')} fixed in `{head[:7]}`: "
                     f"answered and resolved.")
    if still := len(history.open) - len(fixed):
        lines.append(f"{_count(still, 'earlier finding is', 'earlier findings are')} still open "
                     f"(not posted again).")
    if sifted.declined:
        lines.append(f"{_count(len(sifted.declined), 'finding', 'findings')} skipped as declined earlier "
                     f"on this pull request.")
    if sifted.learned:
        lines.append(f"{_count(len(sifted.learned), 'finding', 'findings')} withheld: the repository's approved "
                     f"learned rules cover {'it' if len(sifted.learned) == 1 else 'them'}.")
    if history.reopened:
        lines.append(f"{_count(history.reopened, 'declined finding', 'declined findings')} open again: "
                     f"a writer asked for a fix or unresolved the thread.")
    if history.ignored:
        lines.append(f"{_count(history.ignored, 'reply or resolution', 'replies or resolutions')} on earlier "
                     f"findings not counted: declining or reopening a finding takes the permission "
                     f"`.github/bot.yml` asks of a command (write by default).")
    return lines


async def close_fixed(db: Any, thread: Any, history: History, fixed: list[Earlier], head: str) -> None:
    """Each fixed finding's thread: the reply, then resolved; a GitHub refusal leaves it open."""
    for earlier in fixed:
        try:
            if earlier.comment_id:
                await thread.create_comment(f"Fixed in `{head[:7]}`.\n<!-- bot:fixed {earlier.id} -->",
                                            review_thread=earlier.comment_id, marker=f"<!-- bot:fixed {earlier.id} -->")
            if thread_id := history.thread_ids.get(earlier.comment_id or -1):
                await thread.resolve_review_thread(thread_id)
        except Exception as exc:  # the review stands; the finding stays open and is judged again
            log.warning("could not close the thread of finding %s: %s", earlier.id, exc)
            continue
        memory.mark(db, [earlier.id], memory.FIXED, f"in {head[:7]}")


async def remember(db: Any, thread: Any, posted: dict, chosen: Selection, agents: list[str], head: str,
                   secrets: Iterable[str]) -> None:
    """The commit each agent reviewed, and every finding the review carries (inline or listed)."""
    review_id = posted.get("id") if isinstance(posted.get("id"), int) else None
    comments: list[dict] = []
    if review_id and chosen.posted:
        try:
            comments = await review_comments(thread, review_id)
        except Exception as exc:  # remembered without their comments: their threads cannot be closed later
            log.warning("could not list the review's comments: %s", exc)
    places = {(c.get("path"), c.get("line")): c.get("id") for c in comments}
    rows = []
    for item in chosen.posted + chosen.summarised:
        finding = item.finding
        comment_id = places.get((finding.path, finding.line)) if item in chosen.posted else None
        title = inert.text(redact(title_of(finding.body), secrets), 200)
        rows += [Posted(agent, comment_id, finding.path, finding.line, finding.start_line, finding.side,
                        item.severity, of(finding), title) for agent in item.agents]
    memory.remember(db, thread.repo, thread.number, agents, head, review_id, rows)
