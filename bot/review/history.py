"""A pull request's review history, as the next review of it needs it: from which commit to review
(incremental, or whole and why), the earlier findings still open (each offered to the agents to
judge), those a maintainer declined (never raised again), and afterwards which of this review's
findings repeat an earlier one.

    history = await recall(db, thread, worktree, ["codex"], start_over=False)
    history.change.incremental, history.priors, history.declined
    sifted = sift(merged, history)       # Sifted(new, repeated, declined)

Before a re-review the bot reads its review threads (GraphQL): a maintainer's declining reply, or
the thread resolved by a person while its file did not change, marks the finding declined; a
thread a person resolved after its file changed counts as fixed.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.review import memory, since, threads
from bot.review.findings import Prior
from bot.review.fingerprint import normalised, same_finding
from bot.review.memory import Earlier
from bot.review.merge import Merged

log = logging.getLogger("bot.review.history")


@dataclass
class History:
    change: since.Change
    open: list[Earlier] = field(default_factory=list)
    declined: list[Earlier] = field(default_factory=list)
    priors: list[Prior] = field(default_factory=list)
    newly_declined: int = 0  # marked declined while reading the threads for this review
    thread_ids: dict[int, str] = field(default_factory=dict)  # a finding's comment id -> its review thread


@dataclass
class Sifted:
    new: list[Merged] = field(default_factory=list)
    repeated: list[Merged] = field(default_factory=list)  # an open earlier finding, found again: not posted
    declined: list[Merged] = field(default_factory=list)  # a declined earlier finding: skipped


async def recall(db: Any, thread: Any, worktree: Any, agents: list[str], *, start_over: bool) -> History:
    repo, number = thread.repo, thread.number
    earlier = memory.findings(db, repo, number)
    seen = await _threads(thread, earlier)
    newly = await _settle_threads(db, worktree, [e for e in earlier if e.state == memory.OPEN], seen)
    if newly or seen:
        earlier = memory.findings(db, repo, number)
    change = await _change(db, worktree, repo, number, agents, start_over)
    still = [e for e in earlier if e.state == memory.OPEN]
    priors = [Prior(e.id, e.path, e.line, e.severity, e.title, await since.touched(worktree, e.commit_sha, e.path))
              for e in still]
    return History(change, still, [e for e in earlier if e.state == memory.DECLINED], priors, newly,
                   {comment: state.thread_id for comment, state in seen.items()})


async def _change(db: Any, worktree: Any, repo: str, number: int, agents: list[str],
                  start_over: bool) -> since.Change:
    last = memory.last_reviewed(db, repo, number, agents)
    if not last:
        return since.whole()
    if start_over:
        return since.whole("`review all` was asked")
    missing = [agent for agent in agents if agent not in last]
    if missing:
        return since.whole(f"{', '.join(missing)} has not reviewed this pull request yet")
    if len(set(last.values())) > 1:
        return since.whole("the agents last reviewed different commits")
    return await since.since(worktree, next(iter(last.values())))


async def _threads(thread: Any, earlier: list[Earlier]) -> dict[int, threads.Seen]:
    if not any(e.comment_id and e.state == memory.OPEN for e in earlier):
        return {}
    try:
        return threads.by_comment(await thread.review_threads(), thread.own_logins)
    except Exception as exc:  # the review goes on; the threads are read again next time
        log.warning("could not read the review threads: %s", exc)
        return {}


async def _settle_threads(db: Any, worktree: Any, still: list[Earlier], seen: dict[int, threads.Seen]) -> int:
    """Declined and person-resolved threads of open findings, marked; how many became declined."""
    declined: list[tuple[int, str]] = []
    for earlier in still:
        state = seen.get(earlier.comment_id or -1)
        if state is None:
            continue
        if state.declined_by:
            declined.append((earlier.id, f"@{state.declined_by} declined it in a reply"))
        elif state.resolved_by and not await since.touched(worktree, earlier.commit_sha, earlier.path):
            declined.append((earlier.id, f"@{state.resolved_by} resolved it without a change"))
        elif state.resolved:
            memory.mark(db, [earlier.id], memory.FIXED, f"resolved by @{state.resolved_by or 'the bot'}")
    for finding_id, detail in declined:
        memory.mark(db, [finding_id], memory.DECLINED, detail)
    return len(declined)


def sift(merged: list[Merged], history: History) -> Sifted:
    sifted = Sifted()
    for item in merged:
        if any(_says(e, item) for e in history.declined):
            sifted.declined.append(item)
        elif any(_says(e, item) for e in history.open):
            sifted.repeated.append(item)
        else:
            sifted.new.append(item)
    return sifted


def _says(earlier: Earlier, item: Merged) -> bool:
    return any(same_finding(earlier.path, earlier.fingerprint, normalised(earlier.title), finding)
               for finding in (item.finding, *item.others))
