"""The workflow `bot action workflow` writes: every event a mention can come by, the example files
written from it (never by hand), and `bot action plan` saying why it ignores an event."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli import action, action_workflow
from tests.action.conftest import payload

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / ".github" / "workflows" / "examples"
USES = "acme/agent-bot@0123456789abcdef0123456789abcdef01234567"


def _comments_only() -> dict:
    return yaml.safe_load(action_workflow.render(USES))


def test_the_comments_only_workflow_subscribes_to_submitted_reviews():
    assert _comments_only()[True]["pull_request_review"] == {"types": ["submitted"]}  # YAML 1.1: `on` is True


def test_the_comments_only_workflow_lets_a_mention_in_a_review_body_through():
    assert "github.event.review.body" in _comments_only()["jobs"]["answer"]["if"]


def test_the_subscription_workflow_passes_the_claude_oauth_token():
    workflow = yaml.safe_load(action_workflow.render(USES, "claude-bot", "claude", subscription=True))
    assert workflow["jobs"]["answer"]["steps"][0]["with"] == {
        "handle": "claude-bot", "agent": "claude",
        "claude-code-oauth-token": "${{ secrets.CLAUDE_CODE_OAUTH_TOKEN }}"}


def test_only_claude_has_a_subscription():
    with pytest.raises(action_workflow.WorkflowError, match="only claude"):
        action_workflow.render(USES, agent="codex", subscription=True)


def test_the_example_files_are_exactly_the_generated_ones():
    on_disk = {path.name: path.read_text() for path in EXAMPLES_DIR.glob("*.yml")}
    assert on_disk == action_workflow.examples()


def test_the_examples_script_writes_the_generated_files(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "action-examples"), str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert {path.name: path.read_text() for path in tmp_path.iterdir()} == action_workflow.examples()


def test_plan_prints_the_reason_an_event_is_ignored(runner, capsys):
    runner.event("issue_comment", payload("issue_comment.created", "thanks, looks good"))
    assert action.main(["plan"]) == 0
    assert capsys.readouterr().out == "bot: ignored: no @bot command\n"


def test_plan_names_an_event_it_does_not_act_on(runner, capsys):
    runner.event("issue_comment", {**payload("issue_comment.created", "@bot help"), "action": "deleted"})
    assert action.main(["plan"]) == 0
    assert capsys.readouterr().out == "bot: ignored: issue_comment.deleted is not acted on\n"


def test_plan_says_a_bot_author_is_ignored(runner, capsys):
    data = payload("issue_comment.created", "@bot help")
    data["comment"]["user"] = {**data["comment"]["user"], "login": "renovate[bot]", "type": "Bot"}
    runner.event("issue_comment", data)
    assert action.main(["plan"]) == 0
    assert capsys.readouterr().out == "bot: ignored: the author is a bot\n"


def test_a_workflow_for_a_runner_without_sudo_asks_for_the_process_jail():
    workflow = yaml.safe_load(action_workflow.render(USES, agent="codex", sandbox_tier=0))
    assert workflow["jobs"]["answer"]["steps"][0]["with"]["sandbox-tier"] == "0"


def test_the_default_workflow_leaves_the_sandbox_tier_to_the_action():
    assert "sandbox-tier" not in _comments_only()["jobs"]["answer"]["steps"][0]["with"]
