"""End to end through `bot serve` with the real Codex CLI against the fake provider and the fake
GitHub: a push that changes `.github/bot.yml` on the default branch is read by the worker; a push
that makes it invalid gets one comment on its commit naming the line, a redelivery gets none, and
the schedule of the last valid file still runs."""
from __future__ import annotations

import time

import pytest

from tests.automations.config_payloads import CONFIG, commit, patch, push
from tests.automations.test_schedule_e2e import WEEKLY, answers, tick
from tests.automations.test_schedule_e2e import world as world  # noqa: F401  (the fixture: the tick is the test's)
from tests.fakes.provider import say
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BAD = WEEKLY + b"    colour: red\n"  # line 7: an unknown key
A, B = "a" * 40, "b" * 40


def pushed(world, sha: str, delivery: str | None = None) -> dict:
    """Deliver a push of commit `sha` changing the file, and wait until its job is done."""
    answer = world.service.deliver(push(after=sha, commits=[commit(sha, modified=(CONFIG,))]), event="push",
                                   delivery=delivery)
    assert answer.status_code == 202, answer.text
    db = world.service.database()
    deadline = time.monotonic() + 60
    while db.query("SELECT 1 FROM jobs WHERE status IN ('queued', 'running')"):
        assert time.monotonic() < deadline, "the config job did not finish"
        time.sleep(0.1)
    assert [row["status"] for row in db.query("SELECT status FROM jobs")] == ["done"] * len(db.query(
        "SELECT 1 FROM jobs"))
    return answer.json()


@scenario
def test_a_push_with_a_bad_bot_yml_gets_a_comment_naming_the_line_and_the_old_schedule_still_runs(world):
    world.gh.add_content(REPO, CONFIG, WEEKLY)
    assert pushed(world, A)["queued"] is True
    assert tick(world, "2030-01-07T05:00Z") == "0 slot(s) due"  # the schedule is known: first seen before its slot

    world.gh.add_content(REPO, CONFIG, BAD)
    world.gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: patch(WEEKLY, BAD)})
    assert pushed(world, B)["queued"] is True
    [comment] = world.gh.commit_comments(REPO, B)
    assert (comment["path"], comment["line"]) == (CONFIG, 7)
    assert "line 7" in comment["body"] and "`automations.0.colour`" in comment["body"]
    assert "red" not in comment["body"]  # the file's values are not quoted
    assert pushed(world, B)["queued"] is False  # a redelivery (new delivery id, same push): nothing more
    assert len(world.gh.commit_comments(REPO)) == 1

    world.providers["codex"].script(say("Two dependencies are out of date."))
    assert tick(world, "2030-01-07T06:00Z") == "1 slot(s) due"
    first = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "Two dependencies are out of date." in first[0]
