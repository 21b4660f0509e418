"""Posting the review: GitHub refusing the inline comments still gets the findings posted."""
from __future__ import annotations

import httpx

from bot.github.client import RetryingAPI, Thread
from bot.review import post
from bot.review.post import inline_in_body, post_review
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
PATCH = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a - b  # sum\n"


def review(line: int) -> dict:
    return {"commit_id": "c" * 40, "body": "### Review by codex", "event": "COMMENT",
            "comments": [{"path": "app.py", "line": line, "side": "RIGHT", "body": "sign"}]}


async def posted(gh: FakeGitHub, payload: dict) -> dict:
    async with httpx.AsyncClient() as client:
        return await post_review(Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2), payload)


def fake(monkeypatch) -> FakeGitHub:
    gh = FakeGitHub(require_auth=False).start()
    gh.add_repo(REPO)
    gh.add_pull(REPO, 2)
    gh.add_pull_file(REPO, 2, "app.py", PATCH)
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    return gh


async def test_a_review_on_diff_lines_is_posted_once_with_its_comments(monkeypatch):
    gh = fake(monkeypatch)
    try:
        await posted(gh, review(2))
        [stored] = gh.submitted_reviews(REPO, 2)
        assert [(c["path"], c["line"]) for c in stored["_comments"]] == [("app.py", 2)]
        assert len(gh.calls_to("POST", r"/pulls/2/reviews$")) == 1
    finally:
        gh.stop()


async def test_refused_inline_comments_are_posted_in_the_body(monkeypatch):
    gh = fake(monkeypatch)
    try:
        await posted(gh, review(9))
        [stored] = gh.submitted_reviews(REPO, 2)
        assert stored["_comments"] == [] and "`app.py` line 9 (RIGHT)" in stored["body"] and "sign" in stored["body"]
    finally:
        gh.stop()


def test_inline_in_body_keeps_a_hostile_path_inert():
    payload = {**review(2), "comments": [{"path": "a`<!-- x -->`.py", "line": 2, "side": "RIGHT", "body": "b"}]}
    assert "<!--" not in inline_in_body(payload)["body"]


async def test_a_secret_in_the_review_is_masked_before_it_reaches_github(monkeypatch):
    gh = fake(monkeypatch)
    secret = "sk-test-SECRET-value-0123456789"
    payload = {**review(2), "body": f"key {secret}"}
    payload["comments"][0]["body"] = f"the key is {secret}"
    try:
        async with httpx.AsyncClient() as client:
            await post_review(Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2), payload, [secret])
        [stored] = gh.submitted_reviews(REPO, 2)
        assert secret not in stored["body"] and secret not in stored["_comments"][0]["body"]
    finally:
        gh.stop()


async def test_a_job_run_again_finds_its_review_instead_of_posting_a_second(monkeypatch):
    gh = fake(monkeypatch)
    try:
        async with httpx.AsyncClient() as client:
            thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
            first = await post_review(thread, review(2), marker="<!-- bot:review 7 -->")
            again = await post_review(thread, review(2), marker="<!-- bot:review 7 -->")
        assert again["id"] == first["id"] and len(gh.submitted_reviews(REPO, 2)) == 1
    finally:
        gh.stop()


async def test_a_marker_someone_else_wrote_is_not_the_bots_review(monkeypatch):
    gh = fake(monkeypatch)
    gh.add_review(REPO, 2, "copied <!-- bot:review 7 -->", user="mallory")
    try:
        await posted_with_marker(gh)
        assert len(gh.submitted_reviews(REPO, 2)) == 1
    finally:
        gh.stop()


async def posted_with_marker(gh: FakeGitHub) -> dict:
    async with httpx.AsyncClient() as client:
        return await post_review(Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2), review(2),
                                 marker="<!-- bot:review 7 -->")


async def test_a_pull_request_with_more_files_than_the_cap_is_read_up_to_the_cap_and_the_log_says_so(
        monkeypatch, caplog):
    gh = fake(monkeypatch)
    try:
        for n in range(12):
            gh.add_pull_file(REPO, 2, f"f{n}.py", PATCH)
        monkeypatch.setattr(post, "MAX_FILES", 5)
        async with httpx.AsyncClient() as client:
            files = await post.pull_files(Thread(RetryingAPI(client, oauth_token="t", base_url=gh.url), REPO, 2))
        assert [f["filename"] for f in files] == ["app.py", "f0.py", "f1.py", "f2.py", "f3.py"]
        assert len(gh.calls_to("GET", r"/pulls/2/files$")) == 1
        assert "read stopped at 5 items" in caplog.text
    finally:
        gh.stop()
