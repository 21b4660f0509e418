"""What people did with the bot's review threads, read from GitHub's review threads (GraphQL):
a maintainer's reply that declines the finding ("won't fix", "on purpose", "intended", "by
design", "not a bug"), or the thread resolved by a person.

    seen = by_comment(await thread.review_threads(), thread.own_logins)   # {first comment's id: Seen}
    seen[comment_id].declined_by                       # "alice": she declined it in a reply

Replies are matched, never quoted: they are whoever's text. Only an owner, member or
collaborator declines (anyone may reply on a public repository).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.github.client import DEFAULT_LOGINS, is_own_login

DECLINING = re.compile(r"\b(?:won'?t|will\s+not|not\s+going\s+to)\s+fix\b|\bwontfix\b|\bon\s+purpose\b|"
                       r"\bintended\b|\bintentional(?:ly)?\b|\bby\s+design\b|\bnot\s+a\s+bug\b|\bas\s+designed\b|"
                       r"\bdeclined?\b", re.IGNORECASE)
MAINTAINERS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


@dataclass(frozen=True)
class Seen:
    thread_id: str
    resolved: bool
    resolved_by: str | None  # a person's login; None when unresolved or resolved by the bot
    declined_by: str | None  # the maintainer whose reply declined it


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
            _decliner(comments[1:], own_logins))
    return found


def _decliner(replies: list[dict], own_logins: frozenset[str]) -> str | None:
    for reply in replies:
        login = (reply.get("author") or {}).get("login") or ""
        if is_own_login(login, own_logins) or reply.get("authorAssociation") not in MAINTAINERS:
            continue
        if DECLINING.search(str(reply.get("body") or "")):
            return login
    return None
