"""The fake GitHub answers in the shapes GitHub's REST description documents, route by route, and
the conformance checker catches a request or an answer that is off it."""
from __future__ import annotations

import httpx
import pytest

from tests.fakes.github import FakeGitHub
from tests.fakes.openapi_check import ConformanceChecker

REPO = "octo/repo"
SHA = "a" * 40
HEADERS = {"accept": "application/vnd.github+json", "x-github-api-version": "2022-11-28"}


@pytest.fixture
def gh():
    with FakeGitHub(require_auth=False) as fake:
        fake.add_repo(REPO)
        fake.set_permission(REPO, "alice", "write")
        fake.add_issue(REPO, 1, body="An issue body")
        fake.add_pull(REPO, 2, head_sha=SHA)
        fake.add_pull_file(REPO, 2, "a.py", patch="@@ -1 +1 @@\n-x\n+y")
        yield fake


def _call(gh: FakeGitHub, method: str, path: str, body: dict | None = None,
          accept: str | None = None) -> httpx.Response:
    headers = {**HEADERS, **({"accept": accept} if accept else {})}
    answer = httpx.request(method, gh.url + path, json=body, headers=headers)
    assert answer.status_code < 400, answer.text
    return answer


def _conforming(gh: FakeGitHub) -> list[str]:
    errors = list(gh.conformance_errors)
    gh.conformance_errors.clear()
    return errors


def test_the_repository_permission_and_installation_answers_are_as_documented(gh):
    _call(gh, "GET", f"/repos/{REPO}")
    _call(gh, "GET", f"/repos/{REPO}/collaborators/alice/permission")
    _call(gh, "GET", f"/repos/{REPO}/installation")
    _call(gh, "GET", "/rate_limit")
    assert _conforming(gh) == []


def test_an_issue_and_its_conversation_comments_are_as_documented(gh):
    comment = gh.add_comment(REPO, 1, "@bot explain", user="alice")
    _call(gh, "GET", f"/repos/{REPO}/issues/1")
    _call(gh, "GET", f"/repos/{REPO}/issues/1/comments?per_page=100")
    _call(gh, "POST", f"/repos/{REPO}/issues/1/comments", {"body": "On it"})
    _call(gh, "GET", f"/repos/{REPO}/issues/comments/{comment['id']}")
    _call(gh, "PATCH", f"/repos/{REPO}/issues/comments/{comment['id']}", {"body": "edited"})
    assert _conforming(gh) == []


def test_reactions_on_issues_and_comments_are_as_documented(gh):
    comment = gh.add_comment(REPO, 1, "@bot explain", user="alice")
    review = gh.add_review_comment(REPO, 2, "@bot fix", user="alice", path="a.py", line=1)
    _call(gh, "POST", f"/repos/{REPO}/issues/1/reactions", {"content": "eyes"})
    _call(gh, "POST", f"/repos/{REPO}/issues/comments/{comment['id']}/reactions", {"content": "eyes"})
    _call(gh, "POST", f"/repos/{REPO}/pulls/comments/{review['id']}/reactions", {"content": "eyes"})
    assert _conforming(gh) == []


def test_a_top_level_review_comment_and_its_reply_are_as_documented(gh):
    top = gh.add_review_comment(REPO, 2, "@bot fix", user="alice", path="a.py", line=1)
    _call(gh, "GET", f"/repos/{REPO}/pulls/2/comments")
    _call(gh, "GET", f"/repos/{REPO}/pulls/comments/{top['id']}")
    _call(gh, "PATCH", f"/repos/{REPO}/pulls/comments/{top['id']}", {"body": "edited"})
    _call(gh, "POST", f"/repos/{REPO}/pulls/2/comments/{top['id']}/replies", {"body": "Done"})
    assert _conforming(gh) == []


def test_a_top_level_review_comment_carries_no_in_reply_to_id(gh):
    top = gh.add_review_comment(REPO, 2, "@bot fix", user="alice", path="a.py", line=1)
    assert "in_reply_to_id" not in _call(gh, "GET", f"/repos/{REPO}/pulls/comments/{top['id']}").json()


def test_a_pull_request_its_files_and_reviews_are_as_documented(gh):
    gh.add_review(REPO, 2, "Needs tests", user="carol", state="CHANGES_REQUESTED")
    _call(gh, "GET", f"/repos/{REPO}/pulls/2")
    _call(gh, "GET", f"/repos/{REPO}/pulls/2/files")
    _call(gh, "GET", f"/repos/{REPO}/pulls/2/reviews")
    _call(gh, "POST", f"/repos/{REPO}/pulls/2/reviews", {
        "commit_id": SHA, "event": "COMMENT", "body": "Looks fine",
        "comments": [{"path": "a.py", "line": 1, "side": "RIGHT", "body": "here"}]})
    assert _conforming(gh) == []


def test_the_pull_request_list_and_a_created_pull_request_are_as_documented(gh):
    _call(gh, "GET", f"/repos/{REPO}/pulls?state=open&head=octo:feature")
    _call(gh, "POST", f"/repos/{REPO}/pulls", {"title": "Fix", "head": "bot-fix", "base": "main", "body": "x"})
    assert _conforming(gh) == []


def test_the_pull_request_list_gives_the_simple_shape_without_merge_fields(gh):
    listed = _call(gh, "GET", f"/repos/{REPO}/pulls").json()[0]
    assert "maintainer_can_modify" not in listed and "mergeable" not in listed


def test_check_runs_their_annotations_jobs_and_logs_are_as_documented(gh):
    run = gh.add_check_run(REPO, SHA, "tests", log="boom", annotations=[{"path": "a.py", "message": "bad"}])
    _call(gh, "GET", f"/repos/{REPO}/commits/{SHA}/check-runs")
    _call(gh, "GET", f"/repos/{REPO}/check-runs/{run['id']}/annotations")
    job = gh._state(REPO)["jobs"][run["id"]]
    _call(gh, "GET", f"/repos/{REPO}/actions/runs/{job['run_id']}/jobs")
    httpx.get(gh.url + f"/repos/{REPO}/actions/jobs/{run['id']}/logs", headers=HEADERS)
    assert _conforming(gh) == []


def test_a_check_runs_suite_is_the_documented_reference_only(gh):
    gh.add_check_run(REPO, SHA, "tests")
    listed = _call(gh, "GET", f"/repos/{REPO}/commits/{SHA}/check-runs").json()["check_runs"][0]
    assert set(listed["check_suite"]) == {"id"}


def test_a_file_content_answer_is_as_documented_and_names_its_sha_name_and_links(gh):
    gh.add_content(REPO, "docs/a.png", b"\x89PNG")
    answer = _call(gh, "GET", f"/repos/{REPO}/contents/docs/a.png").json()
    _call(gh, "GET", f"/repos/{REPO}/contents/docs/a.png", accept="application/vnd.github.raw")
    assert _conforming(gh) == []
    assert answer["name"] == "a.png" and answer["sha"] and "self" in answer["_links"]


def test_the_checker_flags_an_undocumented_query_parameter():
    problems = ConformanceChecker().check("GET", f"/repos/{REPO}/pulls?colour=red", None, 200, [])
    assert problems == ["GET /repos/{owner}/{repo}/pulls: undocumented query parameter 'colour'"]


def test_the_checker_flags_a_request_body_off_the_operations_schema():
    problems = ConformanceChecker().check("POST", f"/repos/{REPO}/issues/1/comments", {"text": "hi"}, 422, {})
    assert any("request body" in p and "'body' is a required property" in p for p in problems)


def test_the_checker_flags_an_answer_off_the_statuses_schema():
    problems = ConformanceChecker().check("GET", f"/repos/{REPO}/issues/1", None, 200, {"number": "one"})
    assert any("response 200 at $.number" in p for p in problems)


def test_the_checker_flags_a_path_no_operation_documents():
    problems = ConformanceChecker().check("GET", f"/repos/{REPO}/nonsense", None, 200, {})
    assert problems == [f"GET /repos/{REPO}/nonsense: no documented operation"]


def test_the_checker_flags_a_success_status_the_operation_does_not_document():
    problems = ConformanceChecker().check("POST", f"/repos/{REPO}/issues/1/comments", {"body": "x"}, 200, {})
    assert any("status 200 is not documented" in p for p in problems)


def test_a_pull_requests_issue_names_its_diff_and_patch_urls(gh):
    _call(gh, "GET", f"/repos/{REPO}/issues/2")
    assert _conforming(gh) == []


def test_a_refused_pull_request_is_answered_as_a_documented_validation_failure(gh):
    _call(gh, "POST", f"/repos/{REPO}/pulls", {"title": "Fix", "head": "bot-fix", "base": "main"})
    answer = httpx.post(gh.url + f"/repos/{REPO}/pulls", headers=HEADERS,
                        json={"title": "Fix", "head": "bot-fix", "base": "main"})
    assert answer.status_code == 422 and _conforming(gh) == []


def test_a_refused_review_is_answered_as_a_documented_validation_failure(gh):
    answer = httpx.post(gh.url + f"/repos/{REPO}/pulls/2/reviews", headers=HEADERS, json={
        "event": "COMMENT", "comments": [{"path": "nowhere.py", "line": 1, "body": "here"}]})
    assert answer.status_code == 422 and _conforming(gh) == []


def test_an_exchange_off_the_description_is_recorded_on_the_fake_that_answered_it(gh):
    httpx.get(gh.url + f"/repos/{REPO}/issues/1?colour=red", headers=HEADERS)
    assert _conforming(gh) == ["GET /repos/{owner}/{repo}/issues/{issue_number}: undocumented query parameter 'colour'"]
