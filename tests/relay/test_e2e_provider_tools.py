"""End to end: a real CLI that offers its web tools, in a repository whose web access is off, keeps
working through the relay with the provider-run tools dropped. Codex sends `web_search` on every
call (with gpt-5.5, a catalog model that offers it through a custom provider; its default model
does not); Claude Code and Gemini CLI send their provider-run search in the call their own web
tool makes, which the fake's script asks for."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from tests.fakes.provider import FakeProvider, call, say
from tests.relay.episode import relay_episode

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

CREDENTIAL = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
# the CLI's own web-search tool, called by the scripted model (Codex offers the provider's directly)
SEARCH = {"claude": [call("WebSearch", {"query": "bot relay"})],
          "gemini": [call("google_web_search", {"query": "bot relay"})], "codex": []}
MODEL = {"codex": "gpt-5.5"}


@pytest.fixture(scope="module", params=["claude", "codex", "gemini"])
def ran(request, tmp_path_factory):
    agent = request.param
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[])
    with pytest.MonkeyPatch.context() as monkeypatch, FakeProvider() as fake:
        monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        monkeypatch.setenv(f"BOT_{agent.upper()}_BASE_URL", fake.url)
        fake.script(*SEARCH[agent], say("searched: nothing found"), say("Answered without the web."))
        creds = adapters.Credentials(env={CREDENTIAL[agent]: "sk-real-e2e-KEY-0123456789"}, source="repository")
        relayed = asyncio.run(relay_episode(agent, creds, ctx, tmp_path_factory.mktemp(f"tools-{agent}"),
                                            prompt="Search the web for bot relay.", cli_web_access=True,
                                            model=MODEL.get(agent)))
        return SimpleNamespace(relayed=relayed, requests=list(fake.requests))


def test_the_cli_answers_with_its_provider_run_tools_dropped(ran):
    result = ran.relayed.result
    assert result.ok, (result.error, result.stderr_tail)


def test_no_provider_run_tool_reached_the_provider(ran):
    assert [r.provider_tools for r in ran.requests if r.provider_tools] == []


def test_each_dropped_provider_run_tool_is_recorded(ran):
    events = ran.relayed.recorder.events(ran.relayed.run_id)
    dropped = [e["raw"] for e in events if e["kind"] == "model_policy" and e["outcome"] == "dropped"]
    assert dropped and all(what.startswith(("provider-run tool", "beta flag")) for what in dropped)
