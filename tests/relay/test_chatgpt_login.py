"""A Codex ChatGPT login through the model relay: the relay holds the tokens, sends the real bearer
and account id to ChatGPT's Codex backend, refreshes an expired or refused access token once at the
token endpoint, hands the renewed auth.json to be stored, and stops the episode once when the login
cannot be renewed."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from adapters import base
from adapters.base import Credentials
from bot.config import Settings
from bot.credentials import vault
from bot.credentials.resolve import find_kind
from bot.episode import login_store
from bot.episode.model_channel import model_channel, plan
from bot.relay import chatgpt
from bot.relay.retry import RetryPolicy
from bot.relay.server import ModelRelay, Upstream
from bot.settings.keytest import upstream_for
from sandbox.base import SandboxConfig
from tests.entry_settings import current
from tests.fakes.provider import CHATGPT_RESPONSES, TOKEN_PATH, FakeLogin, say
from tests.relay.conftest import header

BODY = {"model": "gpt-5.5", "stream": True,
        "input": [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}]}


@pytest.fixture
def login(fake, monkeypatch) -> FakeLogin:
    fake.login = FakeLogin()
    monkeypatch.setenv("BOT_CHATGPT_TOKEN_URL", fake.url + TOKEN_PATH)
    return fake.login


def _relay(fake, recorder, run_id, auth_json: str, stored: list | None = None, stops: list | None = None):
    upstream = Upstream("chatgpt", "unused", base_url=fake.url,
                        login=chatgpt.Login.parse(auth_json, token_url=fake.url + TOKEN_PATH),
                        scope="requester", fix_hint="connect a new ChatGPT login on the settings page")
    return ModelRelay(upstream, recorder, run_id, retry=RetryPolicy(retries=0, max_wait_s=1),
                      on_login_refresh=(stored.append if stored is not None else None),
                      on_stop=(stops.append if stops is not None else None))


async def _call(relay: ModelRelay, path: str = CHATGPT_RESPONSES, method: str = "POST"):
    import httpx
    headers = {"authorization": f"Bearer {relay.token}", "chatgpt-account-id": "held-by-the-bot-relay"}
    async with httpx.AsyncClient(base_url=relay.url, timeout=30) as client:
        return await client.request(method, path, json=BODY if method == "POST" else None, headers=headers)


async def test_the_backend_gets_the_real_access_token_and_account_id(fake, recorder, run_id, login):
    fake.script(say("hello"))
    async with _relay(fake, recorder, run_id, login.auth_json()) as relay:
        answer = await _call(relay)
    assert answer.status_code == 200 and "hello" in answer.text
    seen = fake.main_requests()[-1]
    assert header(seen, "authorization") == f"Bearer {login.access_token}"
    assert header(seen, "chatgpt-account-id") == login.account_id


async def test_the_accounts_model_list_is_forwarded(fake, recorder, run_id, login):
    async with _relay(fake, recorder, run_id, login.auth_json()) as relay:
        answer = await _call(relay, "/backend-api/codex/models?client_version=0.171.0", "GET")
    assert answer.status_code == 200
    assert fake.requests[-1].path.startswith("/backend-api/codex/models")


async def test_an_expired_access_token_is_refreshed_before_the_call(fake, recorder, run_id, login):
    login.lifetime_s = -120
    expired = login.auth_json()
    stored: list[str] = []
    async with _relay(fake, recorder, run_id, expired, stored) as relay:
        answer = await _call(relay)
    assert answer.status_code == 200
    assert [r["refresh_token"] for r in login.refreshes] == ["rt-real-1-0123456789"]
    assert [r.path for r in fake.requests if r.path == CHATGPT_RESPONSES] == [CHATGPT_RESPONSES]


async def test_a_refreshed_login_is_handed_over_whole_with_the_rotated_refresh_token(fake, recorder, run_id, login):
    login.lifetime_s = -120
    stored: list[str] = []
    async with _relay(fake, recorder, run_id, login.auth_json(), stored) as relay:
        await _call(relay)
    tokens = json.loads(stored[-1])["tokens"]
    assert (tokens["refresh_token"], tokens["access_token"]) == (login.refresh_token, login.access_token)
    assert tokens["account_id"] == login.account_id


async def test_a_401_refreshes_the_login_once_and_repeats_the_call(fake, recorder, run_id, login):
    fake.script(say("after refresh"))
    auth = login.auth_json()
    login.lifetime_s = 7200  # the backend now wants another access token; the refresh token still works
    async with _relay(fake, recorder, run_id, auth, []) as relay:
        answer = await _call(relay)
    assert answer.status_code == 200 and "after refresh" in answer.text
    assert len(login.refreshes) == 1 and relay.calls[-1].outcome == "ok"


async def test_a_login_that_cannot_be_renewed_stops_the_episode_once(fake, recorder, run_id, login):
    auth = login.auth_json()
    login.generation = 5  # neither the access nor the refresh token is valid any more
    stops: list[str] = []
    async with _relay(fake, recorder, run_id, auth, [], stops) as relay:
        first, second = await _call(relay), await _call(relay)
    assert (first.status_code, second.status_code) == (401, 400)
    assert len(stops) == 1 and "settings page" in stops[0] and len(login.refreshes) == 1


async def test_the_refreshed_tokens_are_redacted_from_the_record(fake, recorder, run_id, login):
    login.lifetime_s = -120
    async with _relay(fake, recorder, run_id, login.auth_json(), []) as relay:
        await _call(relay)
    recorder.record(run_id, base.Tier.ENFORCED, "probe", raw=f"leak {login.access_token} {login.refresh_token}")
    assert login.refresh_token not in json.dumps(recorder.events(run_id))


def test_a_codex_chatgpt_login_is_relayed_to_chatgpts_backend(login, monkeypatch):
    monkeypatch.setenv("BOT_CODEX_BASE_URL", "https://llm.example.internal")  # an API-key gateway
    chosen = plan("codex", Credentials(files={chatgpt.AUTH_FILE: login.auth_json().encode()}), current())
    assert chosen.upstream.provider == "chatgpt" and chosen.upstream.root == "https://chatgpt.com"


def test_an_api_key_login_file_is_relayed_as_the_key():
    chosen = plan("codex", Credentials(files={chatgpt.AUTH_FILE: b'{"OPENAI_API_KEY": "sk-file-key-0123"}'}), current())
    assert chosen.upstream.provider == "openai" and chosen.upstream.credential == "sk-file-key-0123"


async def test_inside_the_sandbox_codex_holds_only_a_placeholder_login(tmp_path, recorder, run_id, login):
    adapter = base.get("codex")
    ctx = SimpleNamespace(conversation="octo/repo#1", requester_id=42, repo_id=0, installation_id=7, repo="octo/repo", secrets=[],
                          settings=current())
    sandbox = SandboxConfig(workdir=tmp_path, home=tmp_path / "home", allowed_hosts=adapter.default_allowed_hosts)
    creds = Credentials(files={chatgpt.AUTH_FILE: login.auth_json().encode()}, source="requester")
    async with model_channel("codex", adapter, creds, ctx, recorder, run_id, sandbox) as channel:
        episode = base.Episode(prompt="hi", workdir=str(tmp_path), home=tmp_path / "home",
                               credentials=channel.credentials, base_url=channel.base_url)
        invocation = adapter.command(episode)
        token = channel.relay.token
    given = " ".join(invocation.argv) + " ".join(invocation.env.values()) + \
        b" ".join(invocation.files.values()).decode()
    assert all(secret not in given for secret in (login.access_token, login.refresh_token, login.account_id))
    assert json.loads(invocation.files[chatgpt.AUTH_FILE])["tokens"]["access_token"] == token
    assert f'model_providers.bot_gateway.base_url="{channel.base_url}/backend-api/codex"' in invocation.argv


def test_a_requesters_refreshed_login_is_sealed_again_in_the_vault(tmp_path, monkeypatch, login):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path))
    ctx = SimpleNamespace(requester_id=42, repo_id=0, repo="octo/repo", installation_id=7, settings=current())
    login_store.saver("codex", "requester", ctx)(login.auth_json())
    assert vault.get(vault.scope_for("user", 42), "codex:auth_json", settings=current()) == login.auth_json()


def test_the_operators_refreshed_login_goes_back_to_its_file_owner_only(tmp_path, monkeypatch, login):
    path = tmp_path / "auth.json"
    path.write_text("{}")
    monkeypatch.setenv("BOT_CODEX_AUTH_FILE", str(path))
    login_store.saver("codex", "operator", SimpleNamespace(settings=current()))(login.auth_json())
    assert path.read_text() == login.auth_json() and path.stat().st_mode & 0o777 == 0o600


def test_the_settings_key_test_leaves_a_chatgpt_login_untested(login):
    assert upstream_for(find_kind("codex:auth_json"), login.auth_json(), current()) is None


def test_the_token_endpoint_a_login_is_refreshed_at_is_the_one_in_the_settings_handed_down(login, monkeypatch):
    monkeypatch.setenv("BOT_CHATGPT_TOKEN_URL", "https://environment.example/oauth/token")
    settings = Settings({"BOT_CHATGPT_TOKEN_URL": "https://auth.example/oauth/token"})
    chosen = plan("codex", Credentials(files={chatgpt.AUTH_FILE: login.auth_json().encode()}), settings)
    assert chosen.upstream.login.token_url == "https://auth.example/oauth/token"


def test_a_login_parsed_without_a_token_endpoint_is_refreshed_at_the_configuration_tables(login, monkeypatch):
    monkeypatch.setenv("BOT_CHATGPT_TOKEN_URL", "https://environment.example/oauth/token")
    assert chatgpt.Login.parse(login.auth_json()).token_url == Settings({}).text("BOT_CHATGPT_TOKEN_URL")
