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
from bot import config as bot_config
from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.config import sandbox_host
from bot.job.model_channel import model_channel
from bot.job.runner import run_episode
from bot.record.recorder import Recorder
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.bridge.test_e2e_clis import AGENTS_DIR, make_worktree
from tests.fakes.provider import FakeProvider, FakeUsage, say

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
    worktree = make_worktree(root)
    recorder = Recorder(root / "bot.db")
    run_id = recorder.start_run(agent=agent, conversation="octo/repo#12", sandbox_tier=1)
    ctx = SimpleNamespace(conversation="octo/repo#12", requester_id=42, installation_id=7, secrets=[])
    kill = asyncio.Event()
    policy = Admission(worktree)
    with FakeProvider() as fake:
        fake.usage = USAGE
        fake.script(say("Answered through the relay."))
        monkeypatch.setenv(f"BOT_{agent.upper()}_BASE_URL", fake.url)  # the relay's upstream
        adapter = adapters.get(agent, bot_config.operator_for(agent))
        spawner = Tier1Spawner(host=sandbox_host())
        config = SandboxConfig(workdir=worktree, home=root / "home", ro_binds=(AGENTS_DIR,),
                               allowed_hosts=adapter.default_allowed_hosts, limits=Limits(timeout_s=120),
                               tmpdir=root / "home" / ".tmp")
        creds = adapters.Credentials(env={CREDENTIAL[agent]: REAL_KEY}, source="repository")
        async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=root / "scratch",
                                on_halt=lambda reason: kill.set()) as bridge, \
                model_channel(agent, adapter, creds, ctx, recorder, run_id, config,
                              on_stop=lambda reason: kill.set()) as channel:
            config.bridge_upstream = ("127.0.0.1", bridge.port)
            episode = adapters.Episode(prompt="Say something.", workdir=config.mount_path, home=config.home,
                                       bridge=bridge.bridge_for(spawner.inside_bridge_url(config)),
                                       base_url=channel.base_url, credentials=channel.credentials)
            env = adapter.command(episode).env
            result = await run_episode(adapter, episode, spawner, config, cancel=kill,
                                       on_event=lambda event: recorder.attest(run_id, event),
                                       bridge_connected=bridge.connected)
    recorder.attach_egress(run_id, result.egress)
    return Ran(result, recorder, run_id, fake, config, env)


@pytest.fixture(scope="module", params=["claude", "codex", "opencode", "gemini"])
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
