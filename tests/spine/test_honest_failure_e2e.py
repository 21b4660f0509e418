"""End to end through `bot run` (the whole pipeline, a real CLI at its default model, the fake
provider): honest failure in the answer, and `web_access` from `.github/bot.yml` reaching the CLI
and the provenance."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.fakes.provider import FakeProvider, fail, say
from tests.spine.service import ROOT

pytestmark = pytest.mark.e2e
KEYS = {"codex": ("BOT_CODEX_BASE_URL", "OPENAI_API_KEY"), "claude": ("BOT_CLAUDE_BASE_URL", "ANTHROPIC_API_KEY")}
WEB_NOTE = "web access on: {agent}'s web search runs at the provider, unseen by the proxy"


def make_repo(path, bot_yml: str | None = None):
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "app.py").write_text("def add(a, b):\n    return a - b\n")
    if bot_yml is not None:
        (path / ".github").mkdir()
        (path / ".github" / "bot.yml").write_text(bot_yml)
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(path), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "i"],
                   check=True)
    return path


@pytest.fixture
def bot_run(tmp_path):
    """`bot run` against the fake provider: bot_run(agent, repo, request) -> CompletedProcess."""
    with FakeProvider() as provider:
        def run(agent: str, repo, request: str) -> subprocess.CompletedProcess:
            base, key = KEYS[agent]
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GITHUB_"))}
            env.update({"BOT_DATA_DIR": str(tmp_path / "data"), base: provider.url,
                        key: "sk-honest-test-0123456789", "PYTHONPATH": str(ROOT)})
            return subprocess.run([sys.executable, "-m", "bot.cli", "run", request, "--agent", agent,
                                   "--repo", str(repo)], env=env, capture_output=True, text=True,
                                  timeout=240, cwd=ROOT)
        run.provider = provider
        yield run


def test_provider_error_is_reported_as_the_provider_failing(bot_run, tmp_path):
    """The provider answers 400 every time: the answer says the provider failed, with its message."""
    bot_run.provider.script(*[fail(400, "mock forced failure (FAIL_400)")] * 6)
    done = bot_run("codex", make_repo(tmp_path / "repo"), "Fix the adder")
    assert "did not finish: the model provider failed:" in done.stdout, (done.stdout, done.stderr[-2000:])
    assert "FAIL_400" in done.stdout


def test_claimed_fix_without_reading_anything_carries_a_warning(bot_run, tmp_path):
    """The model says it fixed the code without a single tool call: the answer is flagged."""
    bot_run.provider.script(say("I've fixed the add function."))
    done = bot_run("codex", make_repo(tmp_path / "repo"), "Fix the adder")
    assert "⚠️ codex read nothing and called no tool in this run" in done.stdout, (done.stdout, done.stderr[-2000:])
    assert (tmp_path / "repo" / "app.py").read_text() == "def add(a, b):\n    return a - b\n"


def test_web_access_true_offers_the_web_tools_and_says_so(bot_run, tmp_path):
    """`web_access: true` in bot.yml: Claude is offered WebSearch, and the provenance names it."""
    done = bot_run("claude", make_repo(tmp_path / "repo", "web_access: true\n"), "Say hello")
    offered = bot_run.provider.main_requests()[0].offered_tools
    assert "WebSearch" in offered, offered
    assert WEB_NOTE.format(agent="claude") in done.stdout, (done.stdout, done.stderr[-2000:])


def test_web_access_is_off_without_the_key(bot_run, tmp_path):
    """No `web_access` key: no web tool offered, nothing said about it."""
    done = bot_run("claude", make_repo(tmp_path / "repo"), "Say hello")
    offered = bot_run.provider.main_requests()[0].offered_tools
    assert "WebSearch" not in offered and "WebFetch" not in offered, offered
    assert "web access on" not in done.stdout and "MOCK_ANSWER" in done.stdout, (done.stdout, done.stderr[-2000:])
