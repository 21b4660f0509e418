"""End to end in relay mode: each real agent CLI in a tier-1 sandbox reaches the fake provider only
through the model relay. The CLI holds the relay's token, the provider sees the real key, every
model call is recorded as enforced with its usage, and the sandbox's egress allows no provider host.

One episode per CLI (module-scoped, a few seconds each) feeds the tests.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from bot.record.recorder import Recorder
from sandbox.base import SandboxConfig
from tests.fakes.provider import FakeProvider, FakeUsage, say
from tests.relay.conftest import price_the_gateway_model
from tests.relay.episode import relay_episode

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]

REAL_KEY = "sk-real-e2e-relay-KEY-0123456789"
CREDENTIAL = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "opencode": "OPENAI_API_KEY",
              "gemini": "GEMINI_API_KEY"}
USAGE = FakeUsage(input=1000, output=100, cached=200)


@dataclass
class Ran:
    result: object
    recorder: Recorder
    run_id: str
    fake: FakeProvider
    config: SandboxConfig
    env: dict


async def _episode(agent: str, root: Path, monkeypatch) -> Ran:
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[])
    with FakeProvider() as fake:
        fake.usage = USAGE
        fake.script(say("Answered through the relay."))
        monkeypatch.setenv(f"BOT_{agent.upper()}_BASE_URL", fake.url)  # the relay's upstream
        price_the_gateway_model(monkeypatch, root.parent)
        creds = adapters.Credentials(env={CREDENTIAL[agent]: REAL_KEY}, source="repository")
        relayed = await relay_episode(agent, creds, ctx, root)
    relayed.recorder.attach_egress(relayed.run_id, relayed.result.egress)
    return Ran(relayed.result, relayed.recorder, relayed.run_id, fake, relayed.config, relayed.invocation.env)


@pytest.fixture(scope="module", params=adapters.names())
def ran(request, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        root = tmp_path_factory.mktemp(f"relay-{request.param}")
        return asyncio.run(_episode(request.param, root, monkeypatch))


def test_the_answer_arrives_through_the_relay(ran):
    assert ran.result.ok, (ran.result.error, ran.result.stderr_tail)
    assert "Answered through the relay." in ran.result.text


def test_the_provider_sees_the_real_key_and_the_cli_only_the_token(ran):
    seen = [" ".join(r.headers.values()) for r in ran.fake.requests if r.api != "other"]
    assert seen and all(REAL_KEY in headers for headers in seen)
    assert REAL_KEY not in " ".join(ran.env.values())


def test_every_model_call_is_recorded_enforced_with_its_usage(ran):
    calls = [e for e in ran.recorder.events(ran.run_id) if e["kind"] == "model_call"]
    answered = [r for r in ran.fake.requests if r.api != "other"]
    assert len(calls) == len(answered) and all(e["tier"] == "enforced" and e["outcome"] == "ok" for e in calls)
    assert all('"output_tokens": 100' in e["raw"] for e in calls)


def test_the_sandbox_may_reach_no_provider_host(ran):
    assert ran.config.allowed_hosts == ()
    assert all(not counts.get("allowed") for counts in ran.recorder.run(ran.run_id)["egress"].values())


def test_no_file_the_cli_left_in_its_home_holds_the_key(ran):
    holding = [path for path in Path(ran.config.home).rglob("*")
               if path.is_file() and not path.is_symlink() and REAL_KEY.encode() in path.read_bytes()]
    assert holding == []
