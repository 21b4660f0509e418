"""End to end: two workflow runs of one thread, each with an empty data dir, joined only by the
thread's session cache (what action.yml restores and saves): the second turn resumes the first's
real Codex session."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.conftest import REPO, WORKFLOW_TOKEN, Runner, payload
from tests.fakes.provider import FakeProvider
from tests.spine.service import make_remote

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]


def run_step(runner: Runner, github, provider, remotes: Path, data_dir: Path, session: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OPENAI", "ANTHROPIC"))}
    env.update(GITHUB_ACTIONS="true", GITHUB_EVENT_NAME=os.environ["GITHUB_EVENT_NAME"],
               GITHUB_EVENT_PATH=os.environ["GITHUB_EVENT_PATH"], GITHUB_TOKEN=WORKFLOW_TOKEN,
               GITHUB_API_URL=github.url, GITHUB_OUTPUT=str(runner.output),
               GITHUB_STEP_SUMMARY=str(runner.summary), BOT_GIT_BASE_URL=f"file://{remotes}",
               BOT_CODEX_BASE_URL=provider.url, BOT_DEFAULT_AGENT="codex", OPENAI_API_KEY="sk-operator-0123456789",
               BOT_DATA_DIR=str(data_dir), BOT_SESSION_CACHE_DIR=str(session), PYTHONPATH=str(ROOT),
               HOME=str(runner.root))
    return subprocess.run([sys.executable, "-m", "bot.cli", "action"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_the_next_workflow_run_resumes_from_the_session_cache_alone(github, runner, tmp_path):
    github.set_permission(REPO, "Codertocat", "admin")
    remotes, session = make_remote(tmp_path), tmp_path / "bot-session"
    with FakeProvider() as provider:
        for request, data_dir in (("@bot codex say hello", tmp_path / "run-1"),
                                  ("@bot codex and again", tmp_path / "run-2")):
            comment = github.add_comment(REPO, 1, request, user="Codertocat")
            runner.event("issue_comment", payload("issue_comment.created", request, id=comment["id"]))
            done = run_step(runner, github, provider, remotes, data_dir, session)
            assert done.returncode == 0, done.stdout + done.stderr
            assert runner.outputs()["session"] == "saved"
    answers = [c["body"] for c in github.comments(REPO, 1) if "MOCK_ANSWER" in c["body"]]
    assert "prior_assistant_turns=0" in answers[0]
    assert "prior_assistant_turns=1" in answers[1] and "resumed session" in answers[1]
    kept = sorted(p.name for p in session.rglob("*") if p.is_file())
    assert kept[-1] == "sessions.json" and all(name.startswith("rollout-") for name in kept[:-1])
    assert not (session / "bot.db").exists() and not list(session.rglob("*.key"))
