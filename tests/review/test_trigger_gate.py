"""The worker's gate for automatic triggers: bot.yml on the default branch, drafts, permission."""
from __future__ import annotations

import httpx
import pytest

from bot.github.client import RetryingAPI, Thread
from bot.intake.spec import Automatic
from bot.job.gate import refused
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub(require_auth=False) as fake:
        fake.add_repo(REPO)
        fake.add_pull(REPO, 2)
        fake.set_permission(REPO, "alice", "write")
        fake.set_permission(REPO, "eve", "read")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        yield fake


async def why(automatic: dict, who: str = "alice") -> str | None:
    async with httpx.AsyncClient() as client:
        return await refused(Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2), Automatic(**automatic), who)


async def test_without_a_bot_yml_every_trigger_is_off(gh):
    assert "off" in await why({"kind": "label"})


async def test_a_trigger_turned_on_runs(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  labels: true\n")
    assert await why({"kind": "label"}) is None


async def test_another_trigger_stays_off(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  labels: true\n")
    assert "off" in await why({"kind": "review_requested"})


async def test_a_draft_is_skipped_unless_drafts_are_on(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  pull_request_opened: true\n")
    assert "draft" in await why({"kind": "pull_request_opened", "draft": True})


async def test_a_draft_is_reviewed_when_drafts_are_on(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  pull_request_opened: true\n  drafts: true\n")
    assert await why({"kind": "pull_request_opened", "draft": True}) is None


async def test_a_person_without_the_permission_triggers_nothing(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  pull_request_opened: true\n")
    assert "may not trigger" in await why({"kind": "pull_request_opened"}, who="eve")


async def test_an_invalid_bot_yml_keeps_triggers_off(gh):
    gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  label: true\n")
    assert "invalid" in await why({"kind": "label"})
