"""A fifth agent is one new module: the adapter in tests/adapters/fifth/agent.py (declared only there,
installed for the subprocess as a package would add it, under the `bot.adapters` entry points)
runs its tiny CLI (tests/adapters/fifth/fifth_cli.py) in tier 1 through the model relay, resumes
its session on the next turn, and answers through `bot run`, `bot serve` and `bot action`."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.conftest import REPO as ACTION_REPO
from tests.action.conftest import WORKFLOW_TOKEN, Runner
from tests.action.conftest import payload as action_payload
from tests.adapters.fifth import plugin
from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider
from tests.record.github_view import visible
from tests.spine.local_cli import local_cli
from tests.spine.service import Service, make_remote, seeded_github, service_env
from tests.spine.test_service_e2e import answers, comment

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
FIFTH_KEY = "sk-fifth-operator-0123456789abcdef"


def _fifth_env(tmp_path: Path, provider: FakeProvider) -> dict[str, str]:
    """The fifth agent installed, its operator key, and its provider (the fake) behind the relay."""
    return {**plugin.install(tmp_path / "fifth"), "BOT_FIFTH_BASE_URL": provider.url, "FIFTH_API_KEY": FIFTH_KEY}


def test_bot_run_answers_with_the_fifth_agent_and_resumes_its_session(tmp_path):
    with local_cli(tmp_path) as cli:
        cli.env.update(_fifth_env(tmp_path, cli.provider))
        first = cli.bot("run", "say hello", "--agent", "fifth", "--repo", str(cli.repo))
        second = cli.bot("run", "and again", "--agent", "fifth", "--repo", str(cli.repo))
    assert first.returncode == 0, first.stdout + first.stderr
    assert "MOCK_ANSWER[chat] prior_assistant_turns=0 last_user=say hello" in first.stdout
    assert "prior_assistant_turns=1 last_user=and again" in second.stdout
    assert "fifth 1.0.0 · resumed session" in second.stdout


def test_the_fifth_agents_key_stays_outside_the_sandbox(tmp_path):
    with local_cli(tmp_path) as cli:
        cli.env.update(_fifth_env(tmp_path, cli.provider))
        done = cli.bot("run", "say hello", "--agent", "fifth", "--repo", str(cli.repo))
        relayed = cli.provider.main_requests("chat")
    assert done.returncode == 0, done.stdout + done.stderr
    # the provider got the operator's key from the relay; the CLI held only the relay's token
    assert relayed and relayed[0].headers["authorization"] == f"Bearer {FIFTH_KEY}"
    assert "egress none" in done.stdout


def test_the_service_answers_a_comment_with_the_fifth_agent_and_the_next_one_resumes(tmp_path):
    gh = seeded_github()
    remotes = make_remote(tmp_path)
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, remotes, provider.url, **_fifth_env(tmp_path, provider))
        service = Service(env, tmp_path / "serve.log").start()
        try:
            assert service.deliver(comment(gh, "@bot fifth say hello", 1)).status_code == 202
            gh.wait_for(lambda: len(answers(gh)) == 1, timeout=120)
            assert service.deliver(comment(gh, "@bot fifth and again", 2)).status_code == 202
            gh.wait_for(lambda: len(answers(gh)) == 2, timeout=120)
        finally:
            service.stop()
            gh.stop()
    first, second = (answer["body"] for answer in answers(gh))
    assert "MOCK_ANSWER[chat] prior_assistant_turns=0" in visible(first)
    assert "prior_assistant_turns=1 last_user=and again" in second


def test_the_action_answers_a_comment_with_the_fifth_agent(tmp_path, monkeypatch):
    (tmp_path / "runner").mkdir()
    runner = Runner(tmp_path / "runner", monkeypatch)
    with FakeGitHub() as github, FakeProvider() as provider:
        github.tokens[WORKFLOW_TOKEN] = 0
        github.add_repo(ACTION_REPO)
        github.add_issue(ACTION_REPO, 1, title="Spelling error in the README file")
        github.set_permission(ACTION_REPO, "Codertocat", "admin")
        request = "@bot fifth say hello"
        posted = github.add_comment(ACTION_REPO, 1, request, user="Codertocat")
        runner.event("issue_comment", action_payload("issue_comment.created", request, id=posted["id"]))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OPENAI", "ANTHROPIC"))}
        env.update(GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="issue_comment", GITHUB_EVENT_PATH=os.environ[
            "GITHUB_EVENT_PATH"], GITHUB_TOKEN=WORKFLOW_TOKEN, GITHUB_API_URL=github.url,
            GITHUB_OUTPUT=str(runner.output), GITHUB_STEP_SUMMARY=str(runner.summary),
            BOT_GIT_BASE_URL=f"file://{make_remote(tmp_path)}", BOT_DATA_DIR=str(tmp_path / "data"),
            BOT_SESSION_CACHE_DIR=str(tmp_path / "session"), HOME=str(runner.root), **_fifth_env(tmp_path, provider))
        done = subprocess.run([sys.executable, "-m", "bot.cli", "action"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=240)
        bodies = [c["body"] for c in github.comments(ACTION_REPO, 1)]
    assert done.returncode == 0, done.stdout + done.stderr
    assert any("MOCK_ANSWER[chat] prior_assistant_turns=0 last_user=" in visible(body or "") for body in bodies)


def test_action_install_refuses_an_agent_that_declares_no_npm_package(tmp_path):
    env = {**os.environ, **plugin.install(tmp_path), "BOT_ACTION_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([str(ROOT / "scripts" / "action-install"), "agent-key", "fifth"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == "action-install: the fifth adapter declares no npm package to install it from"


def test_an_installed_package_adds_the_fifth_agent_to_the_registry(tmp_path):
    env = {**os.environ, **plugin.install(tmp_path)}
    done = subprocess.run([sys.executable, "-c", "from adapters import base; print(*base.names())"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["claude", "codex", "opencode", "gemini", "fifth"]
