"""The one issue per automation where its scheduled runs answer: opened once by the bot, reused on
every run, and replaced when it was closed or deleted (GitHub's 410) or is unknown (404)."""
from __future__ import annotations

import httpx
import pytest

from bot.automations import automation_issue
from bot.github.client import TokenCache, installation_thread
from tests.entry_settings import current, database
from tests.spine.helpers import configure_app
from tests.spine.service import REPO, seeded_github

ISSUES = rf"/repos/{REPO}/issues$"


@pytest.fixture
def gh(monkeypatch):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    yield fake
    fake.stop()


async def _issue_of(db, name: str = "deps") -> int:
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await installation_thread(client, TokenCache.of(current()), 1, REPO, 0)
        return await automation_issue.ensure(db, thread.api, REPO, name)


async def test_the_automation_issue_is_opened_once_and_reused(gh, backend):
    db = database()
    first = await _issue_of(db)
    assert await _issue_of(db) == first
    assert len(gh.calls_to("POST", ISSUES)) == 1


async def test_the_automation_issue_says_what_it_is_and_where_it_is_declared(gh):
    number = await _issue_of(database())
    issue = gh.issues(REPO)[number]
    assert issue["title"] == "Automation: deps"
    assert "`deps`" in issue["body"] and ".github/bot.yml" in issue["body"]


async def test_each_automation_has_its_own_issue(gh):
    db = database()
    assert await _issue_of(db, "deps") != await _issue_of(db, "weekly-report")


async def test_a_closed_automation_issue_is_replaced_by_a_new_one(gh):
    db = database()
    first = await _issue_of(db)
    gh.close_issue(REPO, first)
    second = await _issue_of(db)
    assert second != first and gh.issues(REPO)[second]["state"] == "open"
    assert await _issue_of(db) == second


async def test_a_deleted_automation_issue_is_replaced_by_a_new_one(gh):
    db = database()
    first = await _issue_of(db)
    gh.delete_issue(REPO, first)
    assert await _issue_of(db) not in (first, None)


async def test_an_automation_issue_github_does_not_know_is_replaced(gh):
    db = database()
    db.execute("INSERT INTO automation_issues (repo, automation, number, updated_at) VALUES (?, ?, ?, 0)",
               [REPO, "deps", 999])
    assert await _issue_of(db) != 999 and len(gh.calls_to("POST", ISSUES)) == 1
