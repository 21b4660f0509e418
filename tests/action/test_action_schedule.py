"""`bot action` on a `schedule` event (bot/cli/action_schedule.py): the run's cron line read through
its allowlist, matched to the automations the default branch declares, the agents the plan step
installs, and the automation's issue found by its title or opened once."""
from __future__ import annotations

import re

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import cron
from bot.cli import action_schedule
from bot.cli import main as cli
from bot.github.client import RetryingAPI, Thread
from bot.workspace.repo_config import parse
from tests.action.conftest import REPO, WORKFLOW_TOKEN

CONFIG = ".github/bot.yml"
DECLARED = b"""\
automations:
  - name: deps
    on:
      schedule: [{cron: "0 6 * * 1"}]
    agent: codex
    prompt: Update the dependencies.
  - name: report
    on:
      schedule: [{cron: "*/30 * * * *"}, {cron: "0  6 * * 1"}]
    agent: claude
    prompt: Write the report.
  - name: nightly
    on:
      schedule: [{cron: "0 2 * * *"}]
    agent: gemini
    prompt: Tidy up.
"""


def schedule_event(line: str = "0 6 * * 1") -> dict:
    return {"schedule": line, "repository": {"full_name": REPO, "id": 1296269},
            "workflow": ".github/workflows/agent-bot.yml"}


def _plan(runner) -> dict[str, str]:
    assert cli.main(["action", "plan"]) == 0
    return runner.outputs()


def test_the_plan_installs_the_agents_of_the_automations_on_the_runs_cron_line(github, runner):
    github.add_content(REPO, CONFIG, DECLARED)
    runner.event("schedule", schedule_event())
    assert _plan(runner) == {"kind": "run", "agents": "codex claude",
                             "session-key": action_schedule.session_key("0 6 * * 1")}


def test_the_plan_names_the_cron_lines_session_cache_entry_whatever_issues_exist(github, runner):
    """One entry per (repository, cron line) holds every automation's session (a part per issue)."""
    github.add_content(REPO, CONFIG, DECLARED)
    github.add_issue(REPO, 5, title="Automation: deps", user="bot[bot]")["user"]["type"] = "Bot"
    runner.event("schedule", schedule_event("0  6 * * 1"))
    assert _plan(runner)["session-key"] == action_schedule.session_key("0 6 * * 1")


@given(st.lists(st.sampled_from(["0", "6", "*", "*/5", "1-5", "1,3", "59"]), min_size=5, max_size=5),
       st.lists(st.sampled_from(["0", "7", "*", "*/10", "2-4", "2,4"]), min_size=5, max_size=5))
def test_a_cron_lines_session_key_is_a_cache_key_of_its_own(one, other):
    """A key GitHub's cache takes (no comma, bounded, of the key's characters), the same for the
    line however spaced, another for another line."""
    line, second = " ".join(one), " ".join(other)
    key = action_schedule.session_key(line)
    assert key == action_schedule.session_key("  " + line.replace(" ", "   ") + " ")
    assert re.fullmatch(r"schedule-[0-9a-f]{16}", key)
    assert (key == action_schedule.session_key(second)) == (line == second)


def test_a_cron_line_no_automation_declares_plans_nothing(github, runner, capsys):
    github.add_content(REPO, CONFIG, DECLARED)
    runner.event("schedule", schedule_event("15 * * * *"))
    assert _plan(runner) == {"kind": "ignored", "agents": ""}
    assert "no automation of .github/bot.yml runs on '15 * * * *'" in capsys.readouterr().out


def test_an_invalid_bot_yml_plans_nothing_and_says_where(github, runner, capsys):
    github.add_content(REPO, CONFIG, DECLARED + b"    colour: red\n")
    runner.event("schedule", schedule_event())
    assert _plan(runner)["kind"] == "ignored"
    assert "line 17" in capsys.readouterr().out


def test_a_scheduled_run_without_a_bot_yml_plans_nothing(github, runner):
    runner.event("schedule", schedule_event())
    assert _plan(runner)["kind"] == "ignored"


def test_due_matches_a_line_whatever_its_spacing_in_the_file():
    automations = parse(DECLARED.decode()).automations
    assert [a.name for a in action_schedule.due(automations, "0 6 * * 1")] == ["deps", "report"]
    assert [a.name for a in action_schedule.due(automations, "0 2 * * *")] == ["nightly"]


async def test_the_automations_issue_is_opened_once_then_found_by_its_title(github):
    github.add_issue(REPO, 3, title="Automation: deps", user="mallory")  # a person's issue of that title
    async with httpx.AsyncClient(timeout=30) as client:
        thread = Thread(RetryingAPI(client, oauth_token=WORKFLOW_TOKEN, base_url=github.url), REPO, 0,
                        own_logins=frozenset({"bot[bot]", "github-actions[bot]"}))
        first = await action_schedule.issue_of(thread, "deps")
        assert first not in (1, 2, 3) and await action_schedule.issue_of(thread, "deps") == first
        assert await action_schedule.issue_of(thread, "report") not in (first, 3)
    assert github.issues(REPO)[first]["title"] == "Automation: deps"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120) | st.sampled_from(["0 6 * * 1", " 0  6 * * 1 ", "*/5 * * * *", "61 * * * *",
                                                 "0 6 * * MON", "@daily"]) | st.integers() | st.none())
def test_property_a_cron_line_read_is_one_the_grammar_accepts_single_spaced(line):
    read = action_schedule.cron_line({"schedule": line})
    if read is not None:
        assert read == " ".join(str(line).split()) and set(read) <= set("0123456789*,/- ")
        cron.parse(read)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.text(max_size=30) | st.integers(),
                    lambda inner: st.dictionaries(st.sampled_from(["full_name", "id", "x"]), inner, max_size=3),
                    max_leaves=6) | st.sampled_from([{"full_name": REPO}, {"full_name": "o/.."}]))
def test_property_the_repository_read_is_an_owner_and_name(repository):
    repo = action_schedule.repository({"repository": repository})
    assert repo is None or (repo.count("/") == 1 and all(part not in ("", ".", "..") for part in repo.split("/")))
