"""End to end: `bot action` on the `schedule` event of a workflow `bot action workflow` wrote, as a
step would run it (a subprocess with the runner's env), the real Codex CLI in the sandbox against
the fake provider: the automation on the run's cron line answers in its own issue, opened by the
first run and reused by the next, asked its declared prompt."""
from __future__ import annotations

import json
import os

import pytest

from tests.action.conftest import REPO
from tests.action.test_action_e2e import provider as provider  # noqa: F401  (the fixture)
from tests.action.test_action_e2e import run_step
from tests.action.test_action_schedule import DECLARED, schedule_event
from tests.action.test_session_cache_e2e import run_step as cached_step
from tests.fakes.provider import FakeProvider, call, say
from tests.spine.service import make_remote

pytestmark = pytest.mark.e2e
ONLY_DEPS = DECLARED.replace(b'"*/30 * * * *"}, {cron: "0  6 * * 1"', b'"1 1 1 1 1"')  # deps alone on 0 6 * * 1


TWO_ON_ONE_LINE = (b"automations:\n"
                   b"  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
                   b"    prompt: Update the dependencies.\n"
                   b"  - name: audit\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
                   b"    prompt: Audit the licences.\n")


def automation_issues(github, name: str = "deps") -> list[int]:
    return [n for n, issue in github.issues(REPO).items() if issue["title"] == f"Automation: {name}"]


def answers(github, number: int) -> list[str]:
    return [c["body"] for c in github.comments(REPO, number) if "MOCK_ANSWER" in c["body"]]


def two_runs(github, runner, tmp_path, between=lambda session: None) -> tuple[int, int]:
    """Two scheduled runs of the line both automations are on, each from an empty data dir, joined
    only by the line's session cache entry; `between` does what it likes to the entry in between."""
    github.add_content(REPO, ".github/bot.yml", TWO_ON_ONE_LINE)
    runner.event("schedule", schedule_event("0 6 * * 1"))
    remotes, session = make_remote(tmp_path), tmp_path / "bot-session"
    with FakeProvider() as fake:
        for index, data_dir in enumerate((tmp_path / "run-1", tmp_path / "run-2")):
            if index:
                between(session)
            done = cached_step(runner, github, fake, remotes, data_dir, session)
            assert done.returncode == 0, done.stdout + done.stderr
            assert runner.outputs()["session"] == "saved"
    [deps], [audit] = automation_issues(github), automation_issues(github, "audit")
    return deps, audit


def test_the_next_scheduled_run_resumes_the_automations_session_from_the_session_cache(github, runner, tmp_path):
    github.add_content(REPO, ".github/bot.yml", ONLY_DEPS)
    runner.event("schedule", schedule_event("0 6 * * 1"))
    remotes, session = make_remote(tmp_path), tmp_path / "bot-session"
    with FakeProvider() as fake:
        for data_dir in (tmp_path / "run-1", tmp_path / "run-2"):  # two workflow runs: only the cache joins them
            done = cached_step(runner, github, fake, remotes, data_dir, session)
            assert done.returncode == 0, done.stdout + done.stderr
            assert runner.outputs()["session"] == "saved"
    [number] = automation_issues(github)
    assert os.listdir(session) == [str(number)]  # the line's entry: a part for the automation's issue
    first, second = answers(github, number)
    assert "prior_assistant_turns=0" in first
    assert "prior_assistant_turns=1" in second and "resumed session" in second


def test_two_automations_on_one_line_each_resume_their_own_session_from_the_lines_cache_entry(github, runner,
                                                                                             tmp_path):
    deps, audit = two_runs(github, runner, tmp_path)
    for number in (deps, audit):
        first, second = answers(github, number)
        assert "prior_assistant_turns=0" in first
        assert "prior_assistant_turns=1" in second and "resumed session" in second
    assert sorted(os.listdir(tmp_path / "bot-session")) == sorted([str(deps), str(audit)])


def _poison(session) -> None:
    """Each part swapped for the other's, a stray entry at the top, a link out beside them."""
    deps, audit = sorted(os.listdir(session))
    os.rename(session / deps, session / "swap")
    os.rename(session / audit, session / deps)
    os.rename(session / "swap", session / audit)
    (session / "sessions.json").write_text(json.dumps({"conversation": f"{REPO}#{deps}", "sessions": []}))
    (session / "99").symlink_to(session.parent / "outside")


def test_a_poisoned_lines_entry_neither_silences_nor_redirects_an_automation(github, runner, tmp_path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("not the cache's")
    deps, audit = two_runs(github, runner, tmp_path, between=_poison)
    for number in (deps, audit):  # each answered in its own issue, neither resuming the other's session
        first, second = answers(github, number)
        assert "prior_assistant_turns=0" in first and "prior_assistant_turns=0" in second
        assert "resumed session" not in second
    session = tmp_path / "bot-session"
    assert sorted(os.listdir(session)) == sorted([str(deps), str(audit)])
    for number in (deps, audit):  # what is saved again is each thread's own part
        assert json.loads((session / str(number) / "sessions.json").read_text())["conversation"] == f"{REPO}#{number}"
    assert os.listdir(tmp_path / "outside") == ["keep.txt"]


def test_a_scheduled_run_answers_in_the_automations_issue_and_the_next_run_reuses_it(github, runner, provider,
                                                                                      tmp_path):
    github.add_content(REPO, ".github/bot.yml", ONLY_DEPS)
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


def test_two_automations_on_one_line_each_answer_in_their_issue_and_one_failing_fails_the_step(github, runner,
                                                                                               provider, tmp_path):
    github.add_content(REPO, ".github/bot.yml", DECLARED)  # deps (codex) and report (claude, no key here)
    runner.event("schedule", schedule_event("0 6 * * 1"))
    provider.script(say("Two dependencies are out of date."))
    done = run_step(runner, github, provider, make_remote(tmp_path))
    assert done.returncode == 1 and runner.outputs()["status"] == "failed"
    [deps] = automation_issues(github)
    [report] = [n for n, issue in github.issues(REPO).items() if issue["title"] == "Automation: report"]
    assert "Two dependencies are out of date." in github.comments(REPO, deps)[0]["body"]
    assert len(github.comments(REPO, report)) == 1


LABELLING = (b"automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n"
             b"    prompt: Update the dependencies.\n    may: [comment, label]\n")


def test_a_scheduled_run_in_the_action_that_may_label_labels_its_own_issue(github, runner, provider, tmp_path):
    github.add_content(REPO, ".github/bot.yml", LABELLING)
    github.add_label(REPO, "dependencies")
    runner.event("schedule", schedule_event("0 6 * * 1"))
    provider.script(call("add_labels", {"labels": ["dependencies"]}), say("Labelled."))
    done = run_step(runner, github, provider, make_remote(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    [number] = automation_issues(github)
    assert github.labels_on(REPO, number) == ["dependencies"]
