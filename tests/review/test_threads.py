"""bot/review/threads.py: a maintainer's declining reply, or a person's resolution, read from the
review threads."""
from __future__ import annotations

import pytest

from bot.review.threads import by_comment


def node(*replies: tuple[str, str, str], resolved_by: str | None = None, resolved: bool = False) -> dict:
    comments = [{"databaseId": 11, "authorAssociation": "NONE", "body": "Nit: rename", "author": {"login": "bot"}}]
    comments += [{"databaseId": 12 + i, "authorAssociation": who, "body": body, "author": {"login": login}}
                 for i, (login, who, body) in enumerate(replies)]
    return {"id": "PRRT_11", "isResolved": resolved or resolved_by is not None,
            "resolvedBy": {"login": resolved_by} if resolved_by else None, "comments": {"nodes": comments}}


@pytest.mark.parametrize("words", ["Won't fix", "this is on purpose", "Intended.", "wontfix", "by design",
                                   "Not a bug: the API says so"])
def test_a_maintainer_reply_declining_the_finding_is_seen(words):
    assert by_comment([node(("alice", "MEMBER", words))])[11].declined_by == "alice"


def test_a_reply_by_someone_without_write_access_declines_nothing():
    assert by_comment([node(("mallory", "NONE", "won't fix"))])[11].declined_by is None


def test_a_reply_that_agrees_declines_nothing():
    assert by_comment([node(("alice", "OWNER", "Good catch, fixing it"))])[11].declined_by is None


def test_a_thread_resolved_by_a_person_names_them_and_one_resolved_by_the_bot_does_not():
    assert by_comment([node(resolved_by="alice")])[11].resolved_by == "alice"
    seen = by_comment([node(resolved=True)])[11]
    assert seen.resolved and seen.resolved_by is None
