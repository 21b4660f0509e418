"""Re-review on push: `pull_request.synchronize` is an automatic review, run only where bot.yml sets
reviews.on_push."""
from __future__ import annotations

import httpx
import pytest

from bot.github.client import RetryingAPI, Thread
from bot.intake.spec import Automatic
from bot.intake.triggers import automatic
from bot.job.gate import refused
from bot.workspace.repo_config import parse
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.spine.helpers import payload

REPO = "octo/repo"


def synchronize() -> dict:
    data = payload("pull_request.opened", "")
    data.update(action="synchronize", after="f" * 40)
    return data


def test_a_push_to_a_pull_request_asks_for_an_automatic_review():
    trigger, command = automatic("pull_request", synchronize(), "bot")
    assert trigger["automatic"]["kind"] == "synchronize" and trigger["automatic"]["detail"] == "f" * 40
    assert command.review and trigger["is_pr"]


def test_reviews_on_push_is_off_unless_set():
    assert parse("").reviews.on_push is False
    assert parse("reviews:\n  on_push: true\n").reviews.on_push is True


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub(require_auth=False) as fake:
        fake.add_repo(REPO)
        fake.add_pull(REPO, 2)
        fake.set_permission(REPO, "alice", "write")
        monkeypatch.setenv("GITHUB_API_URL", fake.url)
        yield fake


async def why(kind: str = "synchronize") -> str | None:
    async with httpx.AsyncClient() as client:
        return await refused(Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2),
                             Automatic(kind=kind, detail="", draft=False), "alice")


async def test_a_push_review_runs_only_with_reviews_on_push(gh):
    assert "off" in await why()
    gh.add_content(REPO, ".github/bot.yml", b"reviews:\n  on_push: true\n")
    assert await why() is None
