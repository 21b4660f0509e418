"""A pull request's review history, as the next review of it needs it: from which commit to review
(incremental, or whole and why), the earlier findings still open (each offered to the agents to
judge), those a writer declined (never raised again), and afterwards which of this review's
findings repeat an earlier one.

    history = await recall(db, thread, worktree, ["codex"], start_over=False, may=may)
    history.change.incremental, history.priors, history.declined
    sifted = sift(merged, history)       # Sifted(new, repeated, declined, learned)

Before a re-review the bot reads its review threads (GraphQL) and judges what people did there
(bot/review/signals.py): `may(login)` is the run-time permission check of a command, and only a
signal of someone who may changes a finding (declined, fixed, or open again). A writer's decline
recorded there may propose a learned rule for the repository (bot/review/learned.py); the rules a
maintainer approved come with the history, and `sift` withholds what they cover.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from bot.review import learned as learning
from bot.review import memory, reactions, signals, since, threads
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
    reopened: int = 0  # declined earlier, open again: a writer said so or unresolved the thread
    ignored: int = 0  # signals of people who may not change a finding: not counted
    thread_ids: dict[int, str] = field(default_factory=dict)  # a finding's comment id -> its review thread
    learned: list[learning.Learned] = field(default_factory=list)  # the repository's approved learned rules


@dataclass
class Sifted:
    new: list[Merged] = field(default_factory=list)
    repeated: list[Merged] = field(default_factory=list)  # an open earlier finding, found again: not posted
    declined: list[Merged] = field(default_factory=list)  # a declined earlier finding: skipped
    learned: list[Merged] = field(default_factory=list)  # covered by an approved learned rule: withheld


async def recall(db: Any, thread: Any, worktree: Any, agents: list[str], *, start_over: bool,
                 may: signals.Authority) -> History:
    repo, number = thread.repo, thread.number
    earlier = memory.findings(db, repo, number)
    seen = await _threads(thread, earlier)
    judge = signals.Judge(may, thread)
    changes = await _settle_threads(db, worktree, earlier, seen, judge)
    if changes:
        earlier = memory.findings(db, repo, number)
    if seen:
        await reactions.record(db, thread, earlier, judge)
    if any(c.state == memory.DECLINED for _, c in changes):
        learning.propose(db, repo)
    change = await _change(db, worktree, repo, number, agents, start_over)
    still = [e for e in earlier if e.state == memory.OPEN]
    priors = [Prior(e.id, e.path, e.line, e.severity, e.title, await since.touched(worktree, e.commit_sha, e.path))
              for e in still]
    return History(change, still, [e for e in earlier if e.state == memory.DECLINED], priors,
                   sum(1 for was, c in changes if was == memory.OPEN and c.state == memory.DECLINED),
                   sum(1 for _, c in changes if c.state == memory.OPEN), judge.ignored,
                   {comment: state.thread_id for comment, state in seen.items()}, learning.approved(db, repo))


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
    if not any(e.comment_id for e in earlier):
        return {}
    try:
        return threads.by_comment(await thread.review_threads(), thread.own_logins)
    except Exception as exc:  # the review goes on; the threads are read again next time
        log.warning("could not read the review threads: %s", exc)
        return {}


async def _settle_threads(db: Any, worktree: Any, earlier: list[Earlier], seen: dict[int, threads.Seen],
                          judge: signals.Judge) -> list[tuple[str, signals.Change]]:
    """Each open or declined finding with a thread, judged; the changes marked, each with the state before."""
    changes = []
    for finding in earlier:
        state = seen.get(finding.comment_id or -1)
        if state is None:
            continue
        change = await signals.judged(judge, finding, state, _touched(worktree, finding))
        if change is not None:
            memory.mark(db, [finding.id], change.state, change.detail, via=change.via)
            changes.append((finding.state, change))
    return changes


def _touched(worktree: Any, finding: Earlier) -> Callable[[], Awaitable[bool]]:
    """Whether the finding's file changed since it was posted, asked only when a resolution needs it."""
    return lambda: since.touched(worktree, finding.commit_sha, finding.path)


def sift(merged: list[Merged], history: History) -> Sifted:
    sifted = Sifted()
    for item in merged:
        if any(rule.withholds(finding) for rule in history.learned for finding in (item.finding, *item.others)):
            sifted.learned.append(item)
        elif any(_says(e, item) for e in history.declined):
            sifted.declined.append(item)
        elif any(_says(e, item) for e in history.open):
            sifted.repeated.append(item)
        else:
            sifted.new.append(item)
    return sifted


def _says(earlier: Earlier, item: Merged) -> bool:
    return any(same_finding(earlier.path, earlier.fingerprint, normalised(earlier.title), finding)
               for finding in (item.finding, *item.others))
