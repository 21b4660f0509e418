"""The fake GitHub itself: others' tests rely on its routes and its record."""
from __future__ import annotations

import httpx
import jwt
import pytest

from tests.fakes.github import FakeGitHub


@pytest.fixture
def gh():
    with FakeGitHub() as fake:
        fake.add_repo("octo/repo")
        fake.add_issue("octo/repo", 1)
        yield fake


def _token(gh: FakeGitHub) -> str:
    assertion = jwt.encode({"iss": "1"}, "k" * 32, algorithm="HS256")
    reply = httpx.post(f"{gh.url}/app/installations/7/access_tokens", headers={"authorization": f"Bearer {assertion}"})
    return reply.json()["token"]


def test_repo_routes_refuse_a_token_it_did_not_issue(gh):
    """A call with an unknown token is answered 401, like GitHub's bad credentials."""
    reply = httpx.get(f"{gh.url}/repos/octo/repo", headers={"authorization": "token nope"})
    assert reply.status_code == 401


def test_comment_created_then_edited_is_one_comment(gh):
    """POST then PATCH leaves one comment holding the edited body."""
    auth = {"authorization": f"token {_token(gh)}"}
    created = httpx.post(f"{gh.url}/repos/octo/repo/issues/1/comments", json={"body": "working"}, headers=auth).json()
    httpx.patch(f"{gh.url}/repos/octo/repo/issues/comments/{created['id']}", json={"body": "done"}, headers=auth)
    assert [c["body"] for c in gh.comments("octo/repo", 1)] == ["done"]


def test_repeated_reaction_is_recorded_once(gh):
    """The second identical reaction answers 200 and is not stored twice."""
    auth = {"authorization": f"token {_token(gh)}"}
    comment = gh.add_comment("octo/repo", 1, "@bot hi")
    url = f"{gh.url}/repos/octo/repo/issues/comments/{comment['id']}/reactions"
    statuses = [httpx.post(url, json={"content": "eyes"}, headers=auth).status_code for _ in range(2)]
    assert statuses == [201, 200] and len(gh.reactions) == 1


def test_injected_failure_answers_once_then_recovers(gh):
    """fail_next makes the next matching call fail with the given status and headers."""
    auth = {"authorization": f"token {_token(gh)}"}
    gh.fail_next("GET", r"/repos/octo/repo$", 429, headers={"retry-after": "1"})
    first = httpx.get(f"{gh.url}/repos/octo/repo", headers=auth)
    second = httpx.get(f"{gh.url}/repos/octo/repo", headers=auth)
    assert (first.status_code, first.headers["retry-after"], second.status_code) == (429, "1", 200)


def test_pull_created_for_an_existing_head_is_refused(gh):
    """A second open PR for the same head branch gets GitHub's 422."""
    auth = {"authorization": f"token {_token(gh)}"}
    body = {"title": "Fix", "head": "bot/fix", "base": "main"}
    first = httpx.post(f"{gh.url}/repos/octo/repo/pulls", json=body, headers=auth)
    second = httpx.post(f"{gh.url}/repos/octo/repo/pulls", json=body, headers=auth)
    listed = httpx.get(f"{gh.url}/repos/octo/repo/pulls?head=octo:bot/fix", headers=auth).json()
    assert (first.status_code, second.status_code, len(listed)) == (201, 422, 1)


def test_review_reply_lands_in_the_review_thread(gh):
    """A reply to a review comment is stored with in_reply_to_id pointing at it."""
    auth = {"authorization": f"token {_token(gh)}"}
    gh.add_pull("octo/repo", 2)
    parent = gh.add_review_comment("octo/repo", 2, "@bot fix")
    reply = httpx.post(f"{gh.url}/repos/octo/repo/pulls/2/comments/{parent['id']}/replies",
                       json={"body": "on it"}, headers=auth).json()
    assert reply["in_reply_to_id"] == parent["id"]
