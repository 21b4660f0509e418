"""`bot action workflow --triggers …` / `--config bot.yml`: the workflow subscribes to the events
the automatic triggers come by (docs/reviews.md) and lets them past its pre-filter `if:`; without
triggers it stays the comments-only workflow."""
from __future__ import annotations

import yaml

from bot.cli import action_workflow
from bot.cli import main as cli

USES = "acme/agent-bot@" + "0" * 40


def _workflow(capsys, *args: str) -> dict:
    assert cli.main(["action", "workflow", "--uses", USES, *args]) == 0
    return yaml.safe_load(capsys.readouterr().out)


def _events(workflow: dict) -> dict:
    return {name: spec["types"] for name, spec in workflow[True].items()}  # YAML 1.1 reads `on` as True


def test_labels_subscribe_to_labelled_issues_and_pull_requests(capsys):
    workflow = _workflow(capsys, "--triggers", "labels")
    events = _events(workflow)
    assert "labeled" in events["issues"] and events["pull_request"] == ["labeled"]
    assert "startsWith(github.event.label.name, 'bot:')" in workflow["jobs"]["answer"]["if"]


def test_every_trigger_subscribes_to_its_events(capsys):
    events = _events(_workflow(capsys, "--triggers", "all"))
    assert events["issues"] == ["opened", "labeled", "assigned"]
    assert events["pull_request"] == ["opened", "ready_for_review", "labeled", "assigned", "review_requested"]
    assert events["pull_request_review"] == ["submitted"]


def test_the_if_lets_each_triggers_event_through_and_still_no_bot(capsys):
    condition = _workflow(capsys, "--triggers", "assignment,review_requested,pull_request_opened")["jobs"]["answer"]["if"]
    assert condition.startswith("github.event.sender.type != 'Bot' && (")
    for part in ("github.event.action == 'assigned'", "github.event.action == 'review_requested'",
                 "github.event.action == 'ready_for_review'", "!github.event.pull_request.draft",
                 "github.event.review.body", "github.event.pull_request.body, '@bot')"):
        assert part in condition


def test_the_repositorys_bot_yml_names_the_triggers(capsys, tmp_path):
    config = tmp_path / "bot.yml"
    config.write_text("triggers:\n  review_requested: true\n  labels: false\n")
    workflow = _workflow(capsys, "--config", str(config))
    assert _events(workflow)["pull_request"] == ["review_requested"]
    assert "label.name" not in workflow["jobs"]["answer"]["if"]


def test_drafts_let_a_draft_pull_request_through(capsys, tmp_path):
    config = tmp_path / "bot.yml"
    config.write_text("triggers:\n  pull_request_opened: true\n  drafts: true\n")
    assert "draft" not in _workflow(capsys, "--config", str(config))["jobs"]["answer"]["if"]


def test_an_unknown_trigger_is_refused_naming_the_known_ones(capsys):
    assert cli.main(["action", "workflow", "--uses", USES, "--triggers", "stars"]) == 2
    assert "labels, assignment, review_requested, pull_request_opened" in capsys.readouterr().err


def test_without_triggers_the_workflow_listens_to_mentions_only():
    workflow = yaml.safe_load(action_workflow.render(USES))
    assert set(workflow[True]) == {"issue_comment", "pull_request_review_comment", "pull_request_review", "issues"}
