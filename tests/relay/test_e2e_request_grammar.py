"""End to end: each real agent CLI, through the relay in a repository without web access, makes a
tool call and answers, and the relay's request grammar (bot/relay/grammar.py) removes nothing it
sends: every field and part a pinned CLI sends today, its tool call and the call's result included,
is declared. The only thing dropped is what the body policy drops by design (a provider-run tool
a CLI offers, a beta flag enabling one)."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from tests.fakes.provider import FakeProvider, bridged, say
from tests.relay.conftest import price_the_gateway_model
from tests.relay.episode import relay_episode

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

CREDENTIAL = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "opencode": "OPENAI_API_KEY",
              "gemini": "GEMINI_API_KEY"}
BY_DESIGN = ("provider-run tool", "beta flag")


@pytest.fixture(scope="module", params=adapters.names())
def ran(request, tmp_path_factory):
    agent = request.param
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[])
    with pytest.MonkeyPatch.context() as monkeypatch, FakeProvider() as fake:
        monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        monkeypatch.setenv(f"BOT_{agent.upper()}_BASE_URL", fake.url)
        price_the_gateway_model(monkeypatch, tmp_path_factory.mktemp("prices"))
        fake.script(bridged("read_file", {"path": "app.py"}), say("Read it through the relay."))
        creds = adapters.Credentials(env={CREDENTIAL[agent]: "sk-real-e2e-KEY-0123456789"}, source="repository")
        relayed = asyncio.run(relay_episode(agent, creds, ctx, tmp_path_factory.mktemp(f"grammar-{agent}"),
                                            prompt="Read app.py."))
        return SimpleNamespace(relayed=relayed, requests=fake.main_requests())


def test_the_cli_calls_a_tool_and_answers_through_the_grammar(ran):
    result = ran.relayed.result
    assert result.ok, (result.error, result.stderr_tail)
    assert len(ran.requests) >= 2 and any(r.tool_result for r in ran.requests)


def test_the_grammar_removes_nothing_a_pinned_cli_sends(ran):
    events = ran.relayed.recorder.events(ran.relayed.run_id)
    removed = [e["raw"] for e in events if e["kind"] == "model_policy" and not e["raw"].startswith(BY_DESIGN)]
    assert removed == []
