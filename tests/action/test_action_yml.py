"""action.yml and the example workflows: shape, and no untrusted expression pasted into a shell."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = sorted((ROOT / ".github" / "workflows" / "examples").glob("*.yml"))
EXPRESSION = re.compile(r"\$\{\{")


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _run_steps(steps: list[dict]) -> list[dict]:
    return [step for step in steps if "run" in step]


def test_action_is_a_composite_that_runs_bot_action():
    """The action installs through its install script, then runs `bot action`."""
    action = _action()
    assert action["runs"]["using"] == "composite"
    scripts = "\n".join(step["run"] for step in _run_steps(action["runs"]["steps"]))
    assert '"$GITHUB_ACTION_PATH/scripts/action-install" bot' in scripts
    assert '"$GITHUB_ACTION_PATH/scripts/action-install" agent "${agents[@]}"' in scripts
    assert '"$BOT" action\n' in scripts


def test_every_run_step_declares_a_shell():
    """Composite run steps need an explicit shell."""
    assert all(step.get("shell") == "bash" for step in _run_steps(_action()["runs"]["steps"]))


def test_no_expression_is_interpolated_into_a_script():
    """Inputs and event fields reach scripts only through env, never as ${{ }} inside run:."""
    for step in _run_steps(_action()["runs"]["steps"]):
        assert not EXPRESSION.search(step["run"]), step.get("name")


def test_token_input_defaults_to_the_workflow_token():
    """Like actions/checkout, the token input defaults to github.token."""
    assert _action()["inputs"]["github-token"]["default"] == "${{ github.token }}"


def test_outputs_are_wired_to_the_bot_step():
    """Composite outputs need a value pointing at the step that writes them."""
    outputs = _action()["outputs"]
    assert {name: spec["value"] for name, spec in outputs.items()} == {
        name: f"${{{{ steps.bot.outputs.{name} }}}}" for name in ("status", "answer", "comment-id")}


def test_the_session_cache_is_saved_even_when_the_bot_fails():
    """Sessions survive a failed turn: the session save runs always(), once the bot exported one."""
    saves = [s for s in _action()["runs"]["steps"] if s.get("uses", "").startswith("actions/cache/save")
             and "bot-session" in s["with"]["path"]]
    assert len(saves) == 1 and saves[0]["if"] == "always() && steps.bot.outputs.session == 'saved'"


def test_the_install_scripts_the_action_calls_exist():
    """Every script the action calls is in the repository and executable."""
    for name in ("action-install", "action-sandbox"):
        path = ROOT / "scripts" / name
        assert path.is_file() and path.stat().st_mode & 0o111, name


def test_there_are_example_workflows():
    """Users get at least one workflow to copy."""
    assert EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_grants_nothing_by_default(path):
    """Examples start from `permissions: {}` and grant write only on the job (actions: write to
    replace the thread's session cache)."""
    workflow = yaml.safe_load(path.read_text())
    assert workflow["permissions"] == {}
    for job in workflow["jobs"].values():
        assert set(job["permissions"]) == {"contents", "issues", "pull-requests", "actions"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_scripts_take_values_through_env(path):
    """No example pastes an expression into a shell script."""
    workflow = yaml.safe_load(path.read_text())
    for job in workflow["jobs"].values():
        for step in _run_steps(job["steps"]):
            assert not EXPRESSION.search(step["run"]), step


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_serializes_turns_of_a_thread(path):
    """One thread's turns queue behind each other instead of cancelling the running one."""
    concurrency = yaml.safe_load(path.read_text())["concurrency"]
    assert concurrency["cancel-in-progress"] is False
    assert "number" in concurrency["group"]
