"""bot/review/threads.py: the replies that decline or reopen a finding, and a person's resolution,
read from the review threads."""
from __future__ import annotations

import pytest

from bot.review.threads import Word, by_comment
from bot.review.verdicts import DECLINE, REOPEN


def node(*replies: tuple[str, str, str], resolved_by: str | None = None, resolved: bool = False) -> dict:
    comments = [{"databaseId": 11, "authorAssociation": "NONE", "body": "Nit: rename", "author": {"login": "bot"}}]
    comments += [{"databaseId": 12 + i, "authorAssociation": who, "body": body, "author": {"login": login}}
                 for i, (login, who, body) in enumerate(replies)]
    return {"id": "PRRT_11", "isResolved": resolved or resolved_by is not None,
            "resolvedBy": {"login": resolved_by} if resolved_by else None, "comments": {"nodes": comments}}


@pytest.mark.parametrize("words", ["Won't fix", "this is on purpose", "Intended.", "wontfix", "by design",
                                   "Not a bug: the API says so"])
def test_a_reply_declining_the_finding_is_seen_with_its_author(words):
    assert by_comment([node(("alice", "MEMBER", words))])[11].words == (Word("alice", DECLINE),)


def test_a_reply_is_read_whoever_wrote_it_its_authority_is_asked_of_github_later():
    """The payload's association is no authority: a read-only member is a MEMBER too
    (tests/review/test_signal_authority.py asks GitHub for each person's permission)."""
    assert by_comment([node(("mallory", "NONE", "won't fix"))])[11].words == (Word("mallory", DECLINE),)


def test_a_reply_that_agrees_or_asks_for_a_fix_declines_nothing():
    assert by_comment([node(("alice", "OWNER", "Good catch, fixing it"))])[11].words == ()
    assert by_comment([node(("alice", "OWNER", "this is not intended, please fix"))])[11].words == (
        Word("alice", REOPEN),)


def test_the_bots_own_replies_say_nothing():
    assert by_comment([node(("bot[bot]", "NONE", "Declined."))], frozenset({"bot[bot]"}))[11].words == ()


def test_a_thread_resolved_by_a_person_names_them_and_one_resolved_by_the_bot_does_not():
    assert by_comment([node(resolved_by="alice")])[11].resolved_by == "alice"
    seen = by_comment([node(resolved=True)])[11]
    assert seen.resolved and seen.resolved_by is None
