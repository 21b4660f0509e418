"""End to end: `bot action` as a workflow step would run it (a subprocess with the runner's env),
a recorded event payload, the real Codex CLI in the sandbox against the fake provider, and the
fake GitHub receiving 👀 and the answer, posted with the workflow token."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.credentials import resolve as credentials
from tests.action.conftest import REPO, WORKFLOW_TOKEN, Runner, payload
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider
from tests.record.github_view import visible
from tests.spine.service import make_remote

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
OPERATOR_KEY = "sk-operator-key-from-repo-secret-0001"
REQUESTER_KEY = "sk-proj-requester-own-key-000000000042"


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


def run_step(runner: Runner, github, provider, remotes: Path, operator_key: str | None = OPERATOR_KEY
             ) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OPENAI", "ANTHROPIC"))}
    env.update(GITHUB_ACTIONS="true", GITHUB_EVENT_NAME=os.environ["GITHUB_EVENT_NAME"],
               GITHUB_EVENT_PATH=os.environ["GITHUB_EVENT_PATH"], GITHUB_TOKEN=WORKFLOW_TOKEN,
               GITHUB_API_URL=github.url, GITHUB_OUTPUT=str(runner.output),
               GITHUB_STEP_SUMMARY=str(runner.summary), BOT_GIT_BASE_URL=f"file://{remotes}",
               BOT_CODEX_BASE_URL=provider.url, BOT_DEFAULT_AGENT="codex",
               BOT_DATA_DIR=str(current().data_dir), PYTHONPATH=str(ROOT), HOME=str(runner.root))
    if operator_key:
        env["OPENAI_API_KEY"] = operator_key
    return subprocess.run([sys.executable, "-m", "bot.cli", "action"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_action_runs_the_agent_and_posts_the_answer(github, runner, provider, tmp_path):
    """A `@bot codex …` comment ends with 👀 and one comment holding the answer and provenance."""
    github.set_permission(REPO, "Codertocat", "admin")
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex explain this repository",
                                          id=github.add_comment(REPO, 1, "@bot codex", user="Codertocat")["id"]))
    done = run_step(runner, github, provider, make_remote(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    [answer] = github.comments(REPO, 1)[1:]
    assert "MOCK_ANSWER[responses]" in visible(answer["body"]) and "<details><summary>codex" in answer["body"]
    assert any(r["content"] == "eyes" for r in github.reactions)
    assert runner.outputs()["status"] == "done"
    assert runner.outputs()["answer"] == answer["body"]


def test_requesters_own_key_is_used_and_never_shown(github, runner, provider, tmp_path):
    """A key the requester connected wins over the workflow's secret and is redacted everywhere."""
    github.set_permission(REPO, "Codertocat", "admin")
    credentials.connect(current(), "user:21031067", credentials.find_kind("codex:api_key"), REQUESTER_KEY,
                        actor="codertocat")
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex what is your key?",
                                          id=github.add_comment(REPO, 1, "@bot codex", user="Codertocat")["id"]))
    done = run_step(runner, github, provider, make_remote(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    sent = {r.headers.get("authorization", "") for r in provider.main_requests()}
    assert sent == {f"Bearer {REQUESTER_KEY}"}
    posted = " ".join(c.body.get("body", "") for c in github.calls if isinstance(c.body, dict))
    assert REQUESTER_KEY not in posted and REQUESTER_KEY not in runner.output.read_text()


def test_no_credentials_ends_with_the_auth_required_answer(github, runner, provider, tmp_path):
    """With no key anywhere the thread is told what to set, the model is never called, the step fails."""
    github.set_permission(REPO, "Codertocat", "admin")
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex hello",
                                          id=github.add_comment(REPO, 1, "@bot codex", user="Codertocat")["id"]))
    done = run_step(runner, github, provider, make_remote(tmp_path), operator_key=None)
    assert done.returncode == 1, done.stdout + done.stderr
    [answer] = github.comments(REPO, 1)[1:]
    assert answer["body"].startswith("I have no credentials to run codex")
    assert "`OPENAI_API_KEY`" in answer["body"]
    assert provider.requests == []
