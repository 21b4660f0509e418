"""An event's automations come from the default branch's `.github/bot.yml` as read now; while that
file does not parse, the last valid one stored stays in force (a bad push changes nothing), and a
file that never parsed runs nothing."""
from __future__ import annotations

import httpx
import pytest

from bot import db as bot_db
from bot.automations import event_run
from bot.automations.schedule import remember
from bot.github.client import TokenCache, installation_thread
from bot.intake.automation_event import EventFacts
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from tests.entry_settings import current
from tests.spine.helpers import configure_app
from tests.spine.service import REPO, seeded_github

TRIAGE = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n"
          b"    agent: codex\n    prompt: Say what kind of issue it is.\n")
BAD = TRIAGE.replace(b"triage", b"label-it") + b"    colour: red\n"


@pytest.fixture
def gh(monkeypatch):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    yield fake
    fake.stop()


async def _declared(db) -> list[str]:
    spec = JobSpec(repo=REPO, number=1, author="alice", command=Command(kind="run", agent="codex", request=""),
                   installation_id=1, repo_id=1)
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await installation_thread(client, TokenCache.of(current()), 1, REPO, 1, frozenset({"bot[bot]"}))
        found = await event_run._declared(db, 7, spec, thread, EventFacts("issues", "opened"))
    return [automation.name for automation in found]


async def test_an_event_runs_the_default_branchs_valid_file(gh, backend):
    gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    assert await _declared(bot_db.connect(settings=current())) == ["triage"]


async def test_while_the_default_branch_holds_an_invalid_file_the_last_valid_one_runs(gh, backend):
    db = bot_db.connect(settings=current())
    remember(db, REPO, 1, 1, TRIAGE.decode(), ".github/bot.yml@abc1234")
    gh.add_content(REPO, ".github/bot.yml", BAD)
    assert await _declared(db) == ["triage"]


async def test_an_invalid_file_with_no_valid_one_before_it_runs_nothing(gh, backend):
    gh.add_content(REPO, ".github/bot.yml", BAD)
    assert await _declared(bot_db.connect(settings=current())) == []
