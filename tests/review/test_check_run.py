"""The review's check run through the fake GitHub: in progress, then completed with a conclusion
by severity and the findings as annotations, sent at most 50 a request."""
from __future__ import annotations

import httpx

from bot.github.client import RetryingAPI, Thread
from bot.review import checks
from bot.review.findings import Finding
from bot.review.merge import merge
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
SHA = "a" * 40


def fake(monkeypatch) -> FakeGitHub:
    gh = FakeGitHub(require_auth=False).start()
    gh.add_repo(REPO)
    monkeypatch.setenv("GITHUB_API_URL", gh.url)
    return gh


def found(*severities: str, side: str = "RIGHT") -> list:
    findings = [Finding("codex", "app.py", line, side, f"problem {line}", None, None, severity)
                for line, severity in enumerate(severities, start=1)]
    return merge(findings, ["codex"])


async def reported(gh: FakeGitHub, result: checks.Outcome) -> dict:
    async with httpx.AsyncClient() as client:
        thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
        assert await checks.finish(thread, await checks.start(thread, SHA), result)
    [run] = gh.check_runs_of(REPO, SHA)
    return run


def test_an_important_finding_fails_the_check_at_the_default_threshold():
    result = checks.outcome(found("nit", "important"), fail_on="important", minimum="nit", summary="s")
    assert (result.conclusion, result.title) == ("failure", "1 finding at or above important")


def test_findings_under_fail_on_pass_the_check():
    result = checks.outcome(found("nit", "pre-existing"), fail_on="important", minimum="nit", summary="s")
    assert (result.conclusion, result.title) == ("success", "No findings at or above important")


def test_each_annotation_carries_its_lines_and_a_level_by_severity():
    result = checks.outcome(found("important", "pre-existing", "nit"), fail_on="important", minimum="nit",
                            summary="s")
    assert [(a["path"], a["start_line"], a["end_line"], a["annotation_level"], a["message"])
            for a in result.annotations] == [("app.py", 1, 1, "failure", "problem 1"),
                                             ("app.py", 2, 2, "warning", "problem 2"),
                                             ("app.py", 3, 3, "notice", "problem 3")]


def test_a_finding_on_removed_lines_is_not_annotated_on_the_head_commit():
    result = checks.outcome(found("important", side="LEFT"), fail_on="important", minimum="nit", summary="s")
    assert result.conclusion == "failure" and result.annotations == []


async def test_the_check_run_starts_in_progress_on_the_head_commit_then_completes(monkeypatch):
    gh = fake(monkeypatch)
    try:
        run = await reported(gh, checks.outcome(found("important"), fail_on="important", minimum="nit", summary="s"))
        assert [(h["status"], h["conclusion"]) for h in run["_history"]] == [("in_progress", None),
                                                                          ("completed", "failure")]
        assert (run["name"], run["output"]["title"], run["output"]["annotations_count"]) == (
            "bot review", "1 finding at or above important", 1)
        assert gh.conformance_errors == []
    finally:
        gh.stop()


async def test_more_than_fifty_annotations_are_sent_in_batches_and_the_last_request_completes_the_run(monkeypatch):
    gh = fake(monkeypatch)
    try:
        many = checks.Outcome("failure", "t", "s", [{"path": "app.py", "start_line": n, "end_line": n,
                                                     "annotation_level": "notice", "message": f"m{n}"}
                                                    for n in range(1, 121)])
        run = await reported(gh, many)
        assert [(h["status"], h["annotations"]) for h in run["_history"]] == [
            ("in_progress", 0), ("in_progress", 50), ("in_progress", 50), ("completed", 20)]
        assert [a["message"] for a in run["_annotations"]] == [f"m{n}" for n in range(1, 121)]
    finally:
        gh.stop()


async def test_a_review_that_errors_concludes_neutral_with_the_reason(monkeypatch):
    gh = fake(monkeypatch)
    try:
        run = await reported(gh, checks.errored("every agent failed: the provider answered 500"))
        assert (run["conclusion"], run["output"]["summary"]) == ("neutral", "every agent failed: the provider "
                                                                            "answered 500")
    finally:
        gh.stop()


async def test_a_check_run_github_refuses_is_logged_and_does_not_raise(monkeypatch):
    gh = fake(monkeypatch)
    try:
        gh.fail_next("POST", r"/check-runs$", 403)
        async with httpx.AsyncClient() as client:
            thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
            check = await checks.start(thread, SHA)
            assert check is None and not await checks.finish(thread, check, checks.errored("x"))
    finally:
        gh.stop()


def test_the_app_manifest_asks_for_checks_write():
    from bot.settings.manifest import PERMISSIONS
    assert PERMISSIONS["checks"] == "write"

