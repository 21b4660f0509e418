"""What people did in the bot's review threads, judged: a signal changes what the bot remembers of
a finding only when GitHub says, at the time of the review, that its giver has the permission
`.github/bot.yml` asks of a command (the same run-time check: bot/job/authority.py, write by
default). Every other signal is dropped, logged and counted (the review body says how many).

    judge = Judge(may, thread)                  # may(login) -> bool: the run-time permission check
    change = await judged(judge, earlier, seen, touched)   # Change(state, detail, via) or None

The signals, and what a writer's does:

| finding  | signal                                         | becomes                        |
|----------|------------------------------------------------|--------------------------------|
| open     | a reply that declines (bot/review/verdicts.py) | declined, via the reply        |
| open     | its thread resolved, its file unchanged        | declined, via the resolution   |
| open     | its thread resolved after its file changed     | fixed                          |
| declined | a reply that reopens ("reopen", "please fix")  | open                           |
| declined | via a resolution, its thread unresolved        | open                           |

The last word counts: of a thread's replies that decline or reopen, given by people who may, the
latest decides, and it outweighs a resolution. GitHub does not say who unresolved a thread, only
that it is no longer resolved; writers and the pull request's author can unresolve one, so an
unresolved thread undoes a decline only when the author may too. A decline recorded before these
rules (no `via`) stands only if a writer's reply or resolution still says so, else it is open again.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.review.memory import DECLINED, FIXED, OPEN, VIA_REPLY, VIA_RESOLUTION, Earlier
from bot.review.threads import Seen, Word
from bot.review.verdicts import DECLINE, REOPEN

log = logging.getLogger("bot.review.signals")
Authority = Callable[[str], Awaitable[bool]]  # may this login change what the bot does here?
MAX_PEOPLE = 20  # distinct people asked about per review; anyone past them counts as without permission


@dataclass(frozen=True)
class Change:
    state: str
    detail: str
    via: str | None = None


class Judge:
    """The permission check for one review: each person asked once, at most MAX_PEOPLE of them; a
    failed lookup counts as no permission."""

    def __init__(self, may: Authority, thread: Any):
        self._may, self._thread = may, thread
        self._known: dict[str, bool] = {}
        self.ignored = 0

    async def may(self, login: str) -> bool:
        key = login.lower()
        if key not in self._known:
            self._known[key] = await self._ask(login)
        return self._known[key]

    async def _ask(self, login: str) -> bool:
        if len(self._known) >= MAX_PEOPLE:
            log.warning("%s#%s: more than %d people gave signals; @%s is not asked about",
                        self._thread.repo, self._thread.number, MAX_PEOPLE, login)
            return False
        try:
            return await self._may(login)
        except Exception as exc:  # no answer is no permission; the signal is judged again next review
            log.warning("could not ask GitHub for @%s's permission: %s", login, exc)
            return False

    async def author_may(self) -> bool:
        """Whether the pull request's author may: then only people who may can unresolve its threads."""
        try:
            author = ((await self._thread.pull()).get("user") or {}).get("login")
        except Exception as exc:
            log.warning("could not read the pull request's author: %s", exc)
            return False
        return isinstance(author, str) and bool(author) and await self.may(author)

    def ignore(self, earlier: Earlier, login: str, what: str) -> None:
        self.ignored += 1
        log.warning("%s#%s finding %s: @%s %s, but may not change it: not counted",
                    self._thread.repo, self._thread.number, earlier.id, login, what)


async def judged(judge: Judge, earlier: Earlier, seen: Seen, touched: Callable[[], Awaitable[bool]]) -> Change | None:
    """What the thread's signals make of an open or declined finding; None: it stays as it is."""
    word = await _last_word(judge, earlier, seen)
    if earlier.state == OPEN:
        return await _of_open(judge, earlier, seen, word, touched)
    return await _of_declined(judge, earlier, seen, word)


async def _last_word(judge: Judge, earlier: Earlier, seen: Seen) -> Word | None:
    last = None
    for word in seen.words:
        if await judge.may(word.login):
            last = word
        else:
            judge.ignore(earlier, word.login, f"replied with a {word.verdict}")
    return last


async def _of_open(judge: Judge, earlier: Earlier, seen: Seen, word: Word | None,
                   touched: Callable[[], Awaitable[bool]]) -> Change | None:
    if word is not None:
        return Change(DECLINED, f"@{word.login} declined it in a reply", VIA_REPLY) if word.verdict == DECLINE else None
    resolver = seen.resolved_by
    if resolver is None:
        return None
    if not await judge.may(resolver):
        judge.ignore(earlier, resolver, "resolved its thread")
        return None
    if await touched():
        return Change(FIXED, f"resolved by @{resolver} after its file changed")
    return Change(DECLINED, f"@{resolver} resolved it without a change", VIA_RESOLUTION)


async def _of_declined(judge: Judge, earlier: Earlier, seen: Seen, word: Word | None) -> Change | None:
    if word is not None and word.verdict == REOPEN:
        return Change(OPEN, f"@{word.login} reopened it in a reply")
    if word is not None:
        return None if earlier.declined_via == VIA_REPLY else \
            Change(DECLINED, f"@{word.login} declined it in a reply", VIA_REPLY)
    if earlier.declined_via == VIA_RESOLUTION:
        return Change(OPEN, "its thread was unresolved") if not seen.resolved and await judge.author_may() else None
    if earlier.declined_via == VIA_REPLY:
        return None
    if seen.resolved_by and await judge.may(seen.resolved_by):  # declined before `via` was kept
        return Change(DECLINED, f"@{seen.resolved_by} resolved it", VIA_RESOLUTION)
    return Change(OPEN, "declined earlier without a writer's reply or resolution: open again")
