"""End to end through `bot serve` (both profiles) with the real Codex CLI against the fake provider
and the fake GitHub: a writer's Run now on the repository's settings page runs a scheduled
automation once, in its own issue, with its declared prompt, outside its schedule."""
from __future__ import annotations

import pytest

from tests.automations.test_fire_e2e import answers
from tests.fakes.provider import say
from tests.review.test_learning_e2e import Browser
from tests.review.world import open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
PAGE = f"/settings/repos/{REPO}"
WEEKLY = (b"automations:\n  - name: nightly\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
          b"    prompt: Say what changed this week.\n")


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path, signed_in=True, BOT_SCHEDULE_INTERVAL="0") as opened:
        opened.github.add_repo(REPO, installation_id=1, Codertocat="admin")
        opened.gh.add_content(REPO, ".github/bot.yml", WEEKLY)
        yield opened


@scenario
def test_a_writers_run_now_runs_the_scheduled_automation_once_in_its_issue(world):
    maintainer = Browser(world)
    maintainer.sign_in("Codertocat")
    page = maintainer.go("GET", PAGE).text  # the visit reads and stores the default branch's file
    assert "next run " in page and "Run now" in page
    world.providers["codex"].script(say("Two dependencies were updated."))
    queued = maintainer.go("POST", f"{PAGE}/automations/run",
                           data={"csrf": maintainer.csrf(page), "name": "nightly", "key": "now-e2e"})
    assert queued.status_code == 303, queued.text
    [answer] = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "Two dependencies were updated." in answer
    [asked] = [r.last_user_text for r in world.providers["codex"].main_requests()]
    assert "Say what changed this week." in asked and "started now by a writer" in asked
