"""OpenCode's provider keys through the model relay: each provider the bot supports is OpenCode's
own provider with its baseURL at the relay and the relay's token in its key variable; the relay
forwards that provider's API only, with the real key where the provider takes it."""
from __future__ import annotations

import json

import pytest

from adapters import base
from adapters.base import Credentials, Operator
from bot.episode.model_channel import credential_modes, plan
from bot.relay.pricing import Price, PriceTable, builtin_table
from tests.adapters.helpers import episode
from tests.adapters.test_declared_facts import OPENCODE_PROVIDER_ENV
from tests.entry_settings import current
from tests.relay.conftest import ANTHROPIC, REAL_KEY, header, post

RELAY = "http://127.0.0.1:4999"


def _config(tmp_path, env: dict, operator: Operator | None = None) -> dict:
    inv = base.get("opencode", operator or Operator()).command(
        episode(tmp_path, base_url=RELAY, credentials=Credentials(env=env)))
    return json.loads(inv.env["OPENCODE_CONFIG_CONTENT"])


@pytest.mark.parametrize("provider", sorted(OPENCODE_PROVIDER_ENV))
def test_every_opencode_provider_key_is_relayed_to_its_own_provider(provider):
    variable = OPENCODE_PROVIDER_ENV[provider]
    chosen = plan("opencode", Credentials(env={variable: REAL_KEY}, source="requester"), current())
    assert chosen.upstream.provider == provider and chosen.inside_env == (variable,)


def test_an_opencode_anthropic_key_goes_upstream_as_x_api_key():
    chosen = plan("opencode", Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), current())
    assert chosen.upstream.key_header() == (b"x-api-key", REAL_KEY.encode())


def test_a_custom_opencode_provider_key_stays_direct():
    chosen = plan("opencode", Credentials(env={"MY_LLM_KEY": REAL_KEY}), current())
    assert chosen.upstream is None and "MY_LLM_KEY" in chosen.direct_reason


def test_with_an_operator_gateway_only_the_gateways_openai_key_is_relayed(monkeypatch):
    monkeypatch.setenv("BOT_OPENCODE_BASE_URL", "https://llm.example.internal")
    assert plan("opencode", Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), current()).upstream is None
    assert plan("opencode", Credentials(env={"OPENAI_API_KEY": REAL_KEY}), current()).upstream.root == \
        "https://llm.example.internal"


def test_only_opencodes_login_file_runs_with_the_key_in_the_sandbox():
    assert credential_modes("opencode", current())["direct"] == ["OpenCode auth.json"]


@pytest.mark.parametrize(("variable", "provider", "path"), [
    ("ANTHROPIC_API_KEY", "anthropic", "/v1"), ("GOOGLE_GENERATIVE_AI_API_KEY", "google", "/v1beta"),
    ("OPENAI_API_KEY", "openai", "/v1"), ("MISTRAL_API_KEY", "mistral", "/v1")])
def test_opencode_points_its_own_provider_at_the_relay(tmp_path, variable, provider, path):
    config = _config(tmp_path, {variable: "relay-token"})
    assert config["provider"] == {provider: {"options": {"baseURL": RELAY + path, "apiKey": f"{{env:{variable}}}"}}}


def test_opencode_at_the_relay_keeps_its_default_model(tmp_path):
    config = _config(tmp_path, {"ANTHROPIC_API_KEY": "relay-token"})
    assert "model" not in config and "small_model" not in config


def test_opencode_at_an_operator_gateway_still_uses_the_openai_compatible_provider(tmp_path):
    config = _config(tmp_path, {"OPENAI_API_KEY": "relay-token"}, Operator(base_url=RELAY, model="m1"))
    assert list(config["provider"]) == ["bot_gateway"] and config["model"] == "bot_gateway/m1"


async def test_the_relay_forwards_an_openai_compatible_providers_chat_with_a_bearer(relay, fake):
    fake.script()
    table = builtin_table()  # the built-in table lists no Mistral model: the operator prices the one used
    prices = PriceTable(table.models | {"mistral-large-latest": Price(2.0, 6.0)}, table.aliases, table.version)
    async with relay("mistral", prices=prices) as open_relay:
        answer = await post(open_relay, "/v1/chat/completions",
                            {"model": "mistral-large-latest", "messages": [{"role": "user", "content": "hi"}]},
                            {"authorization": f"Bearer {open_relay.token}"})
    assert answer.status_code == 200
    assert header(fake.requests[-1], "authorization") == f"Bearer {REAL_KEY}"


async def test_the_relay_refuses_another_api_than_the_providers(relay, fake):
    async with relay("mistral") as open_relay:
        answer = await post(open_relay, ANTHROPIC[0], ANTHROPIC[1], {"x-api-key": open_relay.token})
    assert answer.status_code == 404 and fake.requests == []


def test_an_opencode_login_file_with_one_api_key_is_relayed_as_that_key():
    auth = json.dumps({"google": {"type": "api", "key": REAL_KEY}})
    chosen = plan("opencode", Credentials(env={"OPENCODE_AUTH_CONTENT": auth}, source="requester"), current())
    assert (chosen.upstream.provider, chosen.upstream.credential) == ("google", REAL_KEY)
    assert chosen.inside_env == ("GOOGLE_GENERATIVE_AI_API_KEY",)


def test_an_opencode_oauth_login_stays_direct():
    auth = json.dumps({"anthropic": {"type": "oauth", "refresh": "r", "access": "a", "expires": 1}})
    assert plan("opencode", Credentials(env={"OPENCODE_AUTH_CONTENT": auth}), current()).upstream is None
