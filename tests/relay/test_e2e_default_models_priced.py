"""Every pinned CLI's default model has a list price: each real CLI runs at its own default (no
model configured, as a new user has it) through the model relay, and every call the relay recorded
(the main call and any auxiliary one, such as Gemini's router) carries a cost. The models are the
ones the CLIs chose, never a list copied by hand. OpenCode runs once per provider whose key it can
hold, since it picks that provider's default model."""
from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from bot.relay import apis
from tests.fakes.provider import FakeProvider, say
from tests.relay.episode import relay_episode

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

KEY = "sk-real-default-model-KEY-0123456789"
# (agent, its key variable, the provider whose own address the fake stands at)
CASES = [("claude", "ANTHROPIC_API_KEY", "anthropic"), ("codex", "OPENAI_API_KEY", "openai"),
         ("gemini", "GEMINI_API_KEY", "google"), ("opencode", "ANTHROPIC_API_KEY", "anthropic"),
         ("opencode", "GOOGLE_GENERATIVE_AI_API_KEY", "google")]


async def _recorded_calls(agent: str, variable: str, provider: str, root, monkeypatch) -> list[dict]:
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[])
    with FakeProvider() as fake:
        fake.script(say("Answered."))
        monkeypatch.setitem(apis.DEFAULT_BASE, provider, fake.url)
        creds = adapters.Credentials(env={variable: KEY}, source="requester")
        relayed = await relay_episode(agent, creds, ctx, root)
    assert relayed.result.ok, (relayed.result.error, relayed.result.stderr_tail)
    return [json.loads(e["raw"]) for e in relayed.recorder.events(relayed.run_id) if e["kind"] == "model_call"]


@pytest.mark.parametrize(("agent", "variable", "provider"), CASES, ids=[f"{a}-{p}" for a, _, p in CASES])
def test_every_call_a_pinned_cli_makes_at_its_default_model_is_priced(agent, variable, provider, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    for name in ("BASE_URL", "MODEL", "PROVIDER"):
        monkeypatch.delenv(f"BOT_{agent.upper()}_{name}", raising=False)
    calls = asyncio.run(_recorded_calls(agent, variable, provider, tmp_path, monkeypatch))
    unpriced = {call["model"] for call in calls if not isinstance(call["cost_usd"], float)}
    assert calls and not unpriced, unpriced
