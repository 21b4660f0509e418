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
from bot.credentials import vault
from bot.relay import apis, chatgpt
from tests.entry_settings import current
from tests.fakes.provider import CHATGPT_RESPONSES, TOKEN_PATH, FakeLogin, FakeProvider, say
from tests.relay.conftest import header
from tests.relay.episode import relay_episode

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
    ctx = SimpleNamespace(conversation="octo/repo#12", repo="octo/repo", requester_id=42, repo_id=0, installation_id=7,
                          secrets=[])
    with FakeProvider() as fake:
        fake.login = FakeLogin(lifetime_s=-120)  # expired: the relay must refresh before the first call
        auth = fake.login.auth_json()
        fake.script(say("Answered through the relay."))
        monkeypatch.setitem(apis.DEFAULT_BASE, "chatgpt", fake.url)
        monkeypatch.setenv("BOT_CHATGPT_TOKEN_URL", fake.url + TOKEN_PATH)
        creds = adapters.Credentials(files={chatgpt.AUTH_FILE: auth.encode()}, source="requester")
        relayed = await relay_episode("codex", creds, ctx, root)
    stored = vault.get(vault.scope_for("user", 42), "codex:auth_json", settings=current())
    return Ran(relayed.result, fake, fake.login, chatgpt.Login.parse(auth), relayed.invocation,
               relayed.config.home, stored)


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
