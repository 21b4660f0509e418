"""End to end through `bot serve`: a label and an assignment start a run when .github/bot.yml turns
the trigger on, and do nothing at all (no reaction, no comment, no review) when it does not. A review
with nothing to say that no comment asked for (no comment to put a 👍 on) answers in one line."""
from __future__ import annotations

import time

import pytest

from tests.fakes.provider import say
from tests.review.world import PR
from tests.spine.helpers import payload
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
ON = b"triggers:\n  labels: true\n  assignment: true\n"


def labeled(name: str) -> dict:
    data = payload("pull_request.opened")
    data.update(action="labeled", label={"name": name, "color": "ededed"})
    return data


def assigned_issue() -> dict:
    data = payload("issues.opened")
    data.update(action="assigned", assignee={"login": "bot[bot]", "type": "Bot", "id": 99}, installation={"id": 1})
    return data


def finished_jobs(world) -> list[dict]:
    db = world.service.database()
    return [dict(row) for row in db.query("SELECT status, spec FROM jobs WHERE status != 'queued' "
                                          "AND status != 'running'")]


def wait_finished(world, count: int = 1, timeout: float = 60) -> list[dict]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(done := finished_jobs(world)) >= count:
            return done
        time.sleep(0.1)
    raise AssertionError("the job did not finish")


@scenario
def test_review_label_starts_a_review_when_labels_are_on(world):
    world.gh.add_content(REPO, ".github/bot.yml", ON)
    world.providers["codex"].script(say("Nothing to add."))
    assert world.service.deliver(labeled("bot:review"), event="pull_request").status_code == 202
    answer = world.answer()
    assert answer.startswith("✅ codex reviewed `") and "no issues found in 1 file." in answer.split("\n")[0]
    assert world.reviews() == []


def test_agent_label_names_the_reviewing_agent(world):
    world.gh.add_content(REPO, ".github/bot.yml", ON)
    world.providers["claude"].script(say("Nothing to add."))
    world.service.deliver(labeled("bot:claude"), event="pull_request")
    assert world.answer().startswith("✅ claude reviewed `")


def test_label_does_nothing_when_the_trigger_is_off(world):
    world.service.deliver(labeled("bot:review"), event="pull_request")
    wait_finished(world)
    assert world.gh.comments(REPO, PR) == [] and world.reviews() == [] and world.gh.reactions == []
    assert world.providers["codex"].requests == []


def test_assignment_to_the_bot_starts_a_run_on_the_issue(world):
    world.gh.add_content(REPO, ".github/bot.yml", ON)
    world.providers["codex"].script(say("I looked into the spelling."))
    world.service.deliver(assigned_issue(), event="issues")
    answer = world.gh.wait_for(lambda: [c for c in world.gh.comments(REPO, 1) if "<!-- bot:run " in c["body"]],
                               timeout=120)[0]["body"]
    assert "I looked into the spelling." in answer
    assert "it was assigned to you" in world.providers["codex"].main_requests()[0].last_user_text


def test_assignment_does_nothing_when_the_trigger_is_off(world):
    world.gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  labels: true\n")
    world.service.deliver(assigned_issue(), event="issues")
    wait_finished(world)
    assert world.gh.comments(REPO, 1) == [] and world.gh.reactions == []
    assert world.providers["codex"].requests == []


def test_assignment_to_someone_else_queues_nothing(world):
    data = assigned_issue()
    data["assignee"] = {"login": "octocat", "type": "User", "id": 5}
    assert world.service.deliver(data, event="issues").json()["queued"] is False


def test_opened_pull_request_is_reviewed_when_the_trigger_is_on(world):
    world.gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  pull_request_opened: true\n")
    world.providers["codex"].script(say("Nothing to add."))
    world.service.deliver(payload("pull_request.opened"), event="pull_request")
    assert world.answer().startswith("✅ codex reviewed `")


def test_opened_draft_is_skipped_unless_drafts_are_on(world):
    world.gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  pull_request_opened: true\n")
    data = payload("pull_request.opened")
    data["pull_request"]["draft"] = True
    world.service.deliver(data, event="pull_request")
    wait_finished(world)
    assert world.gh.comments(REPO, PR) == [] and world.reviews() == [] and world.providers["codex"].requests == []


def test_review_requested_from_the_bot_starts_a_review(world):
    world.gh.add_content(REPO, ".github/bot.yml", b"triggers:\n  review_requested: true\n")
    world.providers["codex"].script(say("Nothing to add."))
    data = payload("pull_request.opened")
    data.update(action="review_requested", requested_reviewer={"login": "bot[bot]", "type": "Bot", "id": 99})
    world.service.deliver(data, event="pull_request")
    assert world.answer().startswith("✅ codex reviewed `")
