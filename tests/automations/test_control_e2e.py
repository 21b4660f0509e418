"""End to end through `bot serve` (both profiles) with the real Codex CLI against the fake provider
and the fake GitHub: a scheduled run under way in its automation's issue is ended there by a
writer's `@bot stop`, or by their `@bot pause`, whose thread `@bot status` then says is paused; a
mention there waits for it.

The long step is a bridged `run` the fake provider scripts, a sleep; the test knows the run is
under way once its record holds that tool call."""
from __future__ import annotations

import pytest

from tests.automations.test_schedule_e2e import automation_issues, declared, tick
from tests.fakes.provider import call, say
from tests.review.world import open_world
from tests.spine.helpers import payload
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


@pytest.fixture
def world(tmp_path):
    """The automations' world with the service's own tick off: the test ticks, with `bot automations tick --at`."""
    with open_world(tmp_path, BOT_SCHEDULE_INTERVAL="0") as opened_world:
        yield opened_world


def run_under_way(world, *after, command: str = "sleep 60") -> int:
    """The automation's slot claimed and its run mid-step (`command`, then "Never said." and `after`): its
    issue's number."""
    declared(world)
    world.providers["codex"].script(call("run", {"command": command}), say("Never said."), *after)
    assert tick(world, "2030-01-07T06:00Z") == "1 slot(s) due"
    world.gh.wait_for(lambda: world.service.database().query(
        "SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"), timeout=180)
    [number] = automation_issues(world)
    return number


def say_in(world, number: int, body: str, comment_id: int) -> None:
    world.gh.add_comment(REPO, number, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    data["issue"]["number"] = number
    assert world.service.deliver(data).status_code == 202


def bot_said(world, number: int, words: str) -> list[str]:
    return [c["body"] for c in world.gh.comments(REPO, number) if words in (c.get("body") or "")]


def scheduled_job_status(world) -> str:
    return str(world.service.database().query("SELECT status FROM jobs WHERE delivery_id LIKE 'schedule %'")[0]["status"])


@scenario
def test_a_writers_stop_in_the_automations_issue_stops_its_scheduled_run(world):
    number = run_under_way(world)
    say_in(world, number, "@bot stop", 9001)
    [stopped] = world.gh.wait_for(lambda: bot_said(world, number, "Stopped by @Codertocat"), timeout=120)
    assert "Never said." not in stopped
    world.gh.wait_for(lambda: scheduled_job_status(world) == "cancelled", timeout=60)
    assert {"subject": "issue_comment", "comment_id": 9001, "content": "+1"} in world.gh.reactions


@scenario
def test_a_writers_pause_in_the_automations_issue_ends_its_run_and_status_says_who_paused(world):
    number = run_under_way(world)
    say_in(world, number, "@bot pause", 9002)
    [line] = world.gh.wait_for(lambda: bot_said(world, number, "⏸️ Paused by @Codertocat"), timeout=120)
    assert "was stopped" in line
    world.gh.wait_for(lambda: bot_said(world, number, "Stopped by @Codertocat"), timeout=120)
    world.gh.wait_for(lambda: scheduled_job_status(world) == "cancelled", timeout=60)
    say_in(world, number, "@bot status", 9003)
    [status] = world.gh.wait_for(lambda: bot_said(world, number, "**Status of"), timeout=120)
    assert "paused by @Codertocat since 20" in status and "`@bot resume`" in status


@scenario
def test_a_mention_in_the_automations_issue_waits_for_its_scheduled_run(world):
    number = run_under_way(world, say("The mention's answer."), command="sleep 4")
    say_in(world, number, "@bot codex what did you find?", 9004)
    world.gh.wait_for(lambda: bot_said(world, number, "The mention's answer."), timeout=180)
    assert bot_said(world, number, "Never said.")
    jobs = world.service.database().query("SELECT delivery_id, started_at, finished_at FROM jobs "
                                          "WHERE kind = 'episode' ORDER BY id")
    scheduled = next(job for job in jobs if str(job["delivery_id"]).startswith("schedule "))
    assert jobs[-1]["started_at"] >= scheduled["finished_at"]
