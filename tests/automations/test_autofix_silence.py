"""An autofix that does not run because its checks are stale or have no pull request says nothing
(issue 35, docs/automations.md "When the autofix says nothing"): a head that moved on means a newer
push whose own checks will come, and a commit no open pull request has leaves no thread to speak
in. Each is recorded with why (the settings page lists it); no comment, no model call."""
from __future__ import annotations

from tests.automations import payloads
from tests.automations.test_autofix_e2e import FIX_CI
from tests.automations.test_triage_e2e import finished
from tests.spine.service import REPO, scenario


def _comments(world) -> list[dict]:
    return [c for number in (1, 2) for c in world.gh.comments(REPO, number)]


@scenario
def test_checks_of_a_head_the_pull_request_moved_on_from_say_nothing(world):
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    with world.gh._lock:
        world.gh._state(REPO)["pulls"][2]["head"]["sha"] = "c" * 40  # a newer push
    world.service.deliver(payloads.check_suite(head="b" * 40), event="check_suite")
    assert [row["status"] for row in finished(world)] == ["done"]
    rows = world.service.database().query("SELECT kind, outcome FROM automation_runs")
    assert rows == [{"kind": "skipped", "outcome": "the head of #2 moved to ccccccc since the checks of bbbbbbb ran"}]
    assert _comments(world) == [] and world.providers["codex"].requests == []


@scenario
def test_checks_of_a_commit_no_open_pull_request_has_say_nothing(world):
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    world.service.deliver(payloads.check_suite(head="e" * 40, pulls=()), event="check_suite")
    assert [row["status"] for row in finished(world)] == ["done"]
    assert _comments(world) == [] and world.providers["codex"].requests == []
