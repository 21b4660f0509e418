"""`bot action workflow` with a `.github/bot.yml` that declares automations (bot/cli/action_automations.py):
the workflow runs on the scheduled automations' cron lines and lets those runs past its `if:`; the
other automations are named in a comment; nothing else of the file reaches the workflow."""
from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cli import action_automations, action_workflow
from bot.cli import main as cli
from bot.workspace.repo_config import parse

USES = "acme/agent-bot@" + "0" * 40
SCHEDULED = """\
automations:
  - name: deps
    on:
      schedule: [{cron: "0 6 * * 1"}, {cron: "*/30  9-17 * * 1-5"}]
    agent: claude
    prompt: Update the dependencies.
  - name: report
    on:
      schedule: [{cron: "0 6 * * 1"}]
    agent: codex
    prompt: Write the weekly report.
  - name: triage
    on:
      issues: {types: [opened]}
    agent: claude
    prompt: Say whether it is a bug.
"""


def _workflow(capsys, *args: str) -> tuple[dict, str]:
    assert cli.main(["action", "workflow", "--uses", USES, *args]) == 0
    text = capsys.readouterr().out
    return yaml.safe_load(text), text


def _config(tmp_path, text: str = SCHEDULED) -> str:
    path = tmp_path / "bot.yml"
    path.write_text(text)
    return str(path)


def test_the_scheduled_automations_cron_lines_are_the_workflows_schedule_each_once(capsys, tmp_path):
    workflow, _ = _workflow(capsys, "--config", _config(tmp_path))
    assert workflow[True]["schedule"] == [{"cron": "0 6 * * 1"}, {"cron": "*/30 9-17 * * 1-5"}]


def test_a_scheduled_run_passes_the_jobs_if(capsys, tmp_path):
    workflow, _ = _workflow(capsys, "--config", _config(tmp_path))
    condition = workflow["jobs"]["answer"]["if"]
    assert condition.startswith("github.event_name == 'schedule' || (") and "'@bot'" in condition


def test_the_mention_events_stay_and_an_event_automation_is_named_for_the_app(capsys, tmp_path):
    workflow, text = _workflow(capsys, "--config", _config(tmp_path))
    assert workflow[True]["issue_comment"] == {"types": ["created"]}
    assert "# run by the installed App, not by this workflow: triage (issues)" in text
    assert "# the scheduled automations of .github/bot.yml (UTC): deps, report" in text


def test_no_prompt_of_the_file_reaches_the_workflow(capsys, tmp_path):
    _, text = _workflow(capsys, "--config", _config(tmp_path))
    assert "dependencies" not in text and "weekly" not in text and "bug" not in text


def test_the_working_directorys_bot_yml_is_read_by_default(capsys, tmp_path, monkeypatch):
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "bot.yml").write_text(SCHEDULED)
    monkeypatch.chdir(tmp_path)
    workflow, _ = _workflow(capsys)
    assert len(workflow[True]["schedule"]) == 2


def test_without_automations_the_workflow_is_the_comments_only_one(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, text = _workflow(capsys)
    assert text == action_workflow.render(USES)
    _, with_empty = _workflow(capsys, "--config", _config(tmp_path, "automations: []\n"))
    assert with_empty == text


def test_an_invalid_bot_yml_is_refused_naming_its_line(capsys, tmp_path):
    path = _config(tmp_path, SCHEDULED.replace("agent: codex", "agent: codex\n    colour: red"))
    assert cli.main(["action", "workflow", "--uses", USES, "--config", path]) == 2
    err = capsys.readouterr().err
    assert "line 11" in err and "automations.1.colour" in err


_CRON = st.sampled_from(["0 6 * * 1", "*/5 * * * *", "0 0 1 1 *", "15,45 9-17 * * 1-5", "0 12 * * 0", "59 23 31 12 7"])
_NAME = st.from_regex(r"a-[a-z0-9-]{0,20}", fullmatch=True)  # quoted by nothing: never a YAML number or bool
_EVENT = st.sampled_from(["issues: {types: [opened]}", "issue_comment: {}", "fire: {}", "check_suite: {}"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_NAME, st.lists(_CRON, min_size=1, max_size=3) | _EVENT), max_size=6,
                unique_by=lambda item: item[0]))
def test_property_the_workflow_runs_exactly_on_the_declared_cron_lines_and_parses(automations):
    lines = ["automations:"] if automations else ["automations: []"]
    for name, on in automations:
        event = "schedule: [" + ", ".join(f'{{cron: "{c}"}}' for c in on) + "]" if isinstance(on, list) else on
        lines += [f"  - name: {name}", "    on:", f"      {event}", "    agent: claude", "    prompt: Secret words."]
    declared = action_automations.declared(parse("\n".join(lines) + "\n"))
    text = action_workflow.render(USES, automations=declared)
    workflow = yaml.safe_load(text)
    crons = {c for _, on in automations if isinstance(on, list) for c in on}
    assert {entry["cron"] for entry in workflow[True].get("schedule", [])} == crons
    assert len(workflow[True].get("schedule", [])) == len(crons)
    assert ("github.event_name == 'schedule'" in workflow["jobs"]["answer"]["if"]) == bool(crons)
    assert "Secret words" not in text
