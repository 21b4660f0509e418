"""End to end through `bot serve` (both profiles) with the real Codex CLI against the fake provider
and the fake GitHub: an alert's run queues in its automation's issue's thread, so a writer's
`@bot stop` there ends it, and a paused automation issue holds the next alert's run (nothing runs,
no slot is claimed); a fork's autofix queues on the pull request its head names, so a writer's
`@bot pause` there ends it.

The long step is a bridged `run` the fake provider scripts, a sleep; the test knows the run is
under way once its record holds that tool call."""
from __future__ import annotations

import subprocess

import pytest

from tests.automations import payloads
from tests.automations.test_alerts_e2e import DECLARED, answers, automation_issues
from tests.automations.test_autofix_e2e import FIX_CI, FORK_PR, remote
from tests.automations.test_control_e2e import bot_said, say_in
from tests.fakes.provider import call, say
from tests.review.world import PR
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


@pytest.fixture
def world(world):
    world.gh.add_content(REPO, ".github/bot.yml", DECLARED)
    return world


def alert(world, number: int) -> None:
    data = payloads.dependabot_alert(number=number)
    data["repository"]["full_name"] = REPO
    assert world.service.deliver(data, event="dependabot_alert").json()["queued"] is True


def under_way(world) -> None:
    world.gh.wait_for(lambda: world.service.database().query(
        "SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"), timeout=180)


def status_of(world, like: str) -> list[str]:
    return [str(row["status"]) for row in world.service.database().query(
        "SELECT status FROM jobs WHERE delivery_id LIKE ? ORDER BY id", [like])]


@scenario
def test_a_writers_stop_in_the_automations_issue_stops_an_alerts_run(world):
    world.providers["codex"].script(call("run", {"command": "sleep 60"}), say("Never said."))
    alert(world, 3)
    under_way(world)
    [number] = automation_issues(world)
    say_in(world, number, "@bot stop", 9101)
    [stopped] = world.gh.wait_for(lambda: bot_said(world, number, "Stopped by @Codertocat"), timeout=120)
    assert "Never said." not in stopped
    world.gh.wait_for(lambda: status_of(world, "schedule % deps-fix alert:%") == ["cancelled"], timeout=60)


@scenario
def test_a_paused_automation_issue_holds_an_alerts_run(world):
    world.providers["codex"].script(say("The first alert's answer."))
    alert(world, 3)
    world.gh.wait_for(lambda: answers(world), timeout=180)
    [number] = automation_issues(world)
    say_in(world, number, "@bot pause", 9102)
    world.gh.wait_for(lambda: bot_said(world, number, "⏸️ Paused by @Codertocat"), timeout=120)
    alert(world, 4)
    db = world.service.database()
    world.gh.wait_for(lambda: not db.query("SELECT 1 FROM jobs WHERE status IN ('queued', 'running')"), timeout=120)
    assert len(answers(world)) == 1 and len(world.providers["codex"].main_requests()) == 1
    assert status_of(world, "schedule % deps-fix alert:%") == ["done"]
    assert len(db.query("SELECT 1 FROM automation_runs WHERE automation = 'deps-fix'")) == 1


@scenario
def test_a_writers_pause_on_a_forks_pull_request_ends_its_autofix(world):
    head = world.head()
    subprocess.run(["git", "-C", str(world.tmp / "seed"), "push", "-q", str(remote(world)),
                    f"HEAD:refs/pull/{FORK_PR}/head"], check=True)
    world.gh.add_pull(REPO, FORK_PR, head_ref="patch-1", head_sha=head, head_repo="someone/Hello-World",
                      maintainer_can_modify=True, title="A fork's change", user="someone")
    with world.gh._lock:  # only the fork's pull request has this head
        world.gh._state(REPO)["pulls"][PR]["head"]["sha"] = "f" * 40
    world.gh.add_check_run(REPO, head, "test", conclusion="failure", log="FAILED test_add\n")
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    world.providers["codex"].script(call("run", {"command": "sleep 60"}), say("Never said."))
    assert world.service.deliver(payloads.check_suite(head=head, pulls=()), event="check_suite").status_code == 202
    under_way(world)
    say_in(world, FORK_PR, "@bot pause", 9103)
    [line] = world.gh.wait_for(lambda: bot_said(world, FORK_PR, "⏸️ Paused by @Codertocat"), timeout=120)
    assert "was stopped" in line
    [stopped] = world.gh.wait_for(lambda: bot_said(world, FORK_PR, "Stopped by @Codertocat"), timeout=120)
    assert "Never said." not in stopped
    world.gh.wait_for(lambda: status_of(world, f"autofix {REPO}#{FORK_PR} %") == ["done"], timeout=60)  # ended
    assert world.service.database().query("SELECT conversation FROM jobs WHERE delivery_id LIKE 'autofix %'")[0][
        "conversation"] == f"{REPO}#{FORK_PR}"
