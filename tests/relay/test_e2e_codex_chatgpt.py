"""End to end: the real Codex CLI with a ChatGPT login (auth.json) in a tier-1 sandbox, at its
default model, reaches the fake ChatGPT backend only through the model relay. The login's access
token has expired: the relay refreshes it at the (fake) token endpoint before the call and stores
the renewed login sealed in the vault. Codex's argv, environment, files and HOME never hold a real
token; the backend sees the renewed one on every call.
"""
from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from adapters import base as adapters
from bot import config as bot_config
from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.config import sandbox_host
from bot.credentials import vault
from bot.job.model_channel import model_channel
from bot.job.runner import run_episode
from bot.record.recorder import Recorder
from bot.relay import apis, chatgpt
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.bridge.test_e2e_clis import AGENTS_DIR, make_worktree
from tests.fakes.provider import CHATGPT_RESPONSES, TOKEN_PATH, FakeLogin, FakeProvider, say
from tests.relay.conftest import header

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


@dataclass
class Ran:
    result: object
    fake: FakeProvider
    login: FakeLogin
    first: chatgpt.Login
    invocation: adapters.Invocation
    home: Path
    stored: str | None


async def _episode(root: Path, monkeypatch) -> Ran:
    worktree = make_worktree(root)
    recorder = Recorder(root / "bot.db")
    run_id = recorder.start_run(agent="codex", conversation="octo/repo#12", sandbox_tier=1)
    ctx = SimpleNamespace(conversation="octo/repo#12", repo="octo/repo", requester_id=42, installation_id=7,
                          secrets=[])
    kill = asyncio.Event()
    with FakeProvider() as fake:
        fake.login = FakeLogin(lifetime_s=-120)  # expired: the relay must refresh before the first call
        auth = fake.login.auth_json()
        fake.script(say("Answered through the relay."))
        monkeypatch.setitem(apis.DEFAULT_BASE, "chatgpt", fake.url)
        monkeypatch.setenv("BOT_CHATGPT_TOKEN_URL", fake.url + TOKEN_PATH)
        adapter = adapters.get("codex", bot_config.operator_for("codex"))
        spawner = Tier1Spawner(host=sandbox_host())
        config = SandboxConfig(workdir=worktree, home=root / "home", ro_binds=(AGENTS_DIR,),
                               allowed_hosts=adapter.default_allowed_hosts, limits=Limits(timeout_s=120),
                               tmpdir=root / "home" / ".tmp")
        creds = adapters.Credentials(files={chatgpt.AUTH_FILE: auth.encode()}, source="requester")
        async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=root / "scratch",
                                on_halt=lambda reason: kill.set()) as bridge, \
                model_channel("codex", adapter, creds, ctx, recorder, run_id, config,
                              on_stop=lambda reason: kill.set()) as channel:
            config.bridge_upstream = ("127.0.0.1", bridge.port)
            episode = adapters.Episode(prompt="Say something.", workdir=config.mount_path, home=config.home,
                                       bridge=bridge.bridge_for(spawner.inside_bridge_url(config)),
                                       base_url=channel.base_url, credentials=channel.credentials)
            invocation = adapter.command(episode)
            result = await run_episode(adapter, episode, spawner, config, cancel=kill,
                                       on_event=lambda event: recorder.attest(run_id, event),
                                       bridge_connected=bridge.connected)
    stored = vault.get(vault.scope_for("user", 42), "codex:auth_json")
    return Ran(result, fake, fake.login, chatgpt.Login.parse(auth), invocation, config.home, stored)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path_factory.mktemp("data")))
        for variable in ("BOT_CODEX_BASE_URL", "BOT_CODEX_MODEL"):
            monkeypatch.delenv(variable, raising=False)
        return asyncio.run(_episode(tmp_path_factory.mktemp("codex-chatgpt"), monkeypatch))


def test_codex_answers_with_a_chatgpt_login_through_the_relay(ran):
    assert ran.result.ok, (ran.result.error, ran.result.stderr_tail)
    assert "Answered through the relay." in ran.result.text


def test_the_backend_sees_the_renewed_access_token_on_every_call(ran):
    calls = [r for r in ran.fake.requests if r.path == CHATGPT_RESPONSES]
    assert calls and all(header(r, "authorization") == f"Bearer {ran.login.access_token}" for r in calls)
    assert len(ran.login.refreshes) == 1


def test_the_renewed_login_is_stored_in_the_vault(ran):
    assert json.loads(ran.stored)["tokens"]["refresh_token"] == ran.login.refresh_token


def test_no_real_token_is_in_codexs_argv_environment_files_or_home(ran):
    secrets = [ran.first.access_token, ran.first.refresh_token, ran.first.id_token, ran.login.access_token,
               ran.login.refresh_token]
    given = " ".join(ran.invocation.argv) + " ".join(ran.invocation.env.values()) + \
        b" ".join(ran.invocation.files.values()).decode()
    left = b"".join(p.read_bytes() for p in ran.home.rglob("*") if p.is_file() and not p.is_symlink())
    assert [s for s in secrets if s in given or s.encode() in left] == []
