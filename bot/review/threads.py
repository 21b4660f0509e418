"""What people did in the bot's review threads, read from GitHub's review threads (GraphQL): the
replies whose first line the grammar of bot/review/verdicts.py knows (a decline or a reopen), and
whether the thread is resolved and by whom.

    seen = by_comment(await thread.review_threads(), thread.own_logins)   # {first comment's id: Seen}
    seen[comment_id].words          # (Word("alice", "decline"),): what each person said, oldest first

Replies are classified, never quoted: they are whoever's text. Nothing here decides whether the
person may change the finding: bot/review/signals.py asks GitHub for each one's permission.
The query reads at most 100 threads of 50 comments each (bot/github/client.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.github.client import DEFAULT_LOGINS, is_own_login
from bot.review.verdicts import classify


@dataclass(frozen=True)
class Word:
    login: str
    verdict: str  # verdicts.DECLINE or verdicts.REOPEN


@dataclass(frozen=True)
class Seen:
    thread_id: str
    resolved: bool
    resolved_by: str | None  # a person's login; None when unresolved, or resolved by the bot or nobody named
    words: tuple[Word, ...] = ()  # the replies the grammar knows, by people (not the bot), oldest first


def by_comment(threads: list[dict], own_logins: frozenset[str] = DEFAULT_LOGINS) -> dict[int, Seen]:
    found = {}
    for node in threads:
        comments = ((node.get("comments") or {}).get("nodes")) or []
        if not comments or not isinstance(comments[0].get("databaseId"), int):
            continue
        resolver = ((node.get("resolvedBy") or {}).get("login")) or None
        found[comments[0]["databaseId"]] = Seen(
            str(node.get("id") or ""), bool(node.get("isResolved")),
            resolver if resolver and not is_own_login(resolver, own_logins) else None,
            _words(comments[1:], own_logins))
    return found


def _words(replies: list[dict], own_logins: frozenset[str]) -> tuple[Word, ...]:
    words = []
    for reply in replies:
        login = (reply.get("author") or {}).get("login") or ""
        if not login or is_own_login(login, own_logins):
            continue
        verdict = classify(str(reply.get("body") or ""))
        if verdict is not None:
            words.append(Word(login, verdict))
    return tuple(words)
