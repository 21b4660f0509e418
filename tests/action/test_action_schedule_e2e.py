"""End to end: `bot action` on the `schedule` event of a workflow `bot action workflow` wrote, as a
step would run it (a subprocess with the runner's env), the real Codex CLI in the sandbox against
the fake provider: the automation on the run's cron line answers in its own issue, opened by the
first run and reused by the next, asked its declared prompt."""
from __future__ import annotations

import pytest

from tests.action.conftest import REPO
from tests.action.test_action_e2e import provider as provider  # noqa: F401  (the fixture)
from tests.action.test_action_e2e import run_step
from tests.action.test_action_schedule import DECLARED, schedule_event
from tests.fakes.provider import say
from tests.spine.service import make_remote

pytestmark = pytest.mark.e2e


def automation_issues(github) -> list[int]:
    return [n for n, issue in github.issues(REPO).items() if issue["title"] == "Automation: deps"]


def test_a_scheduled_run_answers_in_the_automations_issue_and_the_next_run_reuses_it(github, runner, provider,
                                                                                      tmp_path):
    github.add_content(REPO, ".github/bot.yml", DECLARED.replace(b'"*/30 * * * *"}, {cron: "0  6 * * 1"', b'"1 1 1 1 1"'))
    runner.event("schedule", schedule_event("0 6 * * 1"))
    remotes = make_remote(tmp_path)
    provider.script(say("Two dependencies are out of date."))
    done = run_step(runner, github, provider, remotes)
    assert done.returncode == 0, done.stdout + done.stderr
    [number] = automation_issues(github)
    [answer] = github.comments(REPO, number)
    assert "Two dependencies are out of date." in answer["body"] and runner.outputs()["status"] == "done"
    asked = provider.main_requests()[0].last_user_text
    assert "scheduled automation `deps`" in asked and "Update the dependencies." in asked

    provider.script(say("Still out of date."))
    done = run_step(runner, github, provider, remotes)
    assert done.returncode == 0, done.stdout + done.stderr
    assert automation_issues(github) == [number] and len(github.comments(REPO, number)) == 2
