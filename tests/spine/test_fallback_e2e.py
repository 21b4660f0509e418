"""End to end: `bot serve`, the real Claude Code and Codex CLIs, the fake provider answering 529 for
Anthropic's API, the fake GitHub. With `fallback: [codex]` in `.github/bot.yml` Codex answers the
comment, fresh with the thread's recap, and the answer says so at the top with the failed
attempt's spend; without it the answer names the failure, the provider's words and when to retry."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, fail
from tests.record.github_view import visible
from tests.spine.helpers import payload
from tests.spine.service import REPO, make_remote, scenario, seeded_github, service_env, serving

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
CLAUDE_KEY = "sk-ant-fallback-test-0123456789"


def with_bot_yml(remotes: Path, text: str, tmp: Path) -> None:
    """Commits `.github/bot.yml` to the remote's main branch."""
    work = tmp / "bot-yml"
    subprocess.run(["git", "clone", "-q", str(remotes / f"{REPO}.git"), str(work)], check=True)
    (work / ".github").mkdir()
    (work / ".github" / "bot.yml").write_text(text)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "bot.yml"], check=True)
    subprocess.run(git + ["push", "-q", "origin", "HEAD:main"], check=True)


@pytest.fixture
def world(tmp_path, monkeypatch):
    """start(bot_yml) -> (gh, provider, service): Anthropic's API overloaded and asking for a longer
    wait than the relay's longest (so it is not retried), OpenAI's answering."""
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))  # the service's database, read here
    with FakeProvider() as provider:
        provider.outage(fail(529, "Overloaded", retry_after="30"), api="anthropic")

        def start(bot_yml: str | None):
            gh = seeded_github()
            remotes = make_remote(tmp_path)
            if bot_yml is not None:
                with_bot_yml(remotes, bot_yml, tmp_path)
            env = service_env(tmp_path, gh, remotes, provider.url, BOT_CLAUDE_BASE_URL=provider.url,
                              ANTHROPIC_API_KEY=CLAUDE_KEY, BOT_RELAY_RETRY_MAX_WAIT="5")
            return gh, provider, serving(gh, env, tmp_path / "serve.log")

        yield start


def answer_of(gh, service, body: str) -> str:
    gh.add_comment(REPO, 1, body, user="Codertocat", comment_id=7)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = 7
    assert service.deliver(data).status_code == 202
    found = gh.wait_for(lambda: [c for c in gh.comments(REPO, 1) if MARKER.search(c["body"] or "")], timeout=300)
    return found[0]["body"]


def runs() -> list[dict]:
    return list(store.connect(settings=current()).query("SELECT agent, status, limits, mode, sandbox_tier FROM runs ORDER BY started_at"))


@scenario
def test_an_overloaded_claude_is_answered_by_codex_with_the_recap_and_the_failed_attempts_spend(world):
    gh, provider, serving_ = world("fallback: [codex]\n")
    with serving_ as service:
        body = answer_of(gh, service, "@bot claude explain the README")
    assert body.startswith("↪️ Claude was overloaded; answered by Codex.\n\n"), body
    assert "MOCK_ANSWER[responses]" in visible(body), body
    assert "before: claude overloaded (HTTP 529), 0 tokens, $0.00" in body, body
    assert "new session (Claude was overloaded)" in body, body
    [codex_call] = [r for r in provider.main_requests("responses")][:1]
    assert "(Starting a fresh session: Claude was overloaded.)" in codex_call.last_user_text
    assert "Spelling error in the README file" in codex_call.last_user_text  # the thread's recap
    first, second = runs()
    assert (first["agent"], second["agent"], second["status"]) == ("claude", "codex", "ok")
    assert (first["limits"], first["mode"], first["sandbox_tier"]) == (second["limits"], second["mode"],
                                                                       second["sandbox_tier"])


def test_without_a_fallback_the_answer_names_the_failure_the_providers_words_and_when_to_retry(world):
    gh, provider, serving_ = world(None)
    with serving_ as service:
        body = answer_of(gh, service, "@bot claude explain the README")
    assert body.startswith("❌ Claude was overloaded: Anthropic answered HTTP 529 “Overloaded”. "
                           "Try again in 30 s (the provider's Retry-After)."), body
    assert "`fallback: [AGENT, …]` in `.github/bot.yml`" in body, body
    assert not provider.main_requests("responses") and [r["agent"] for r in runs()] == ["claude"]
