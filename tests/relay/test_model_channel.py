"""An episode's model channel: the CLI gets the relay's URL and token, never the key; the sandbox may
reach no provider host; where a credential cannot be relayed, the record says the key is inside."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from adapters import base
from adapters.base import Credentials
from bot.config import Settings
from bot.episode.model_channel import credential_modes, model_channel, plan
from bot.relay.budgets import Caps
from sandbox.base import SandboxConfig
from tests.entry_settings import current
from tests.relay.conftest import REAL_KEY


def _ctx():
    return SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[], settings=current())


def _sandbox(tmp_path: Path, adapter) -> SandboxConfig:
    return SandboxConfig(workdir=tmp_path, home=tmp_path / "home",
                         allowed_hosts=tuple(adapter.default_allowed_hosts) + ("pypi.org",))


def test_a_claude_api_key_is_relayed_as_x_api_key():
    chosen = plan("claude", Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}, source="repository"), current())
    assert (chosen.upstream.key_header(), chosen.inside_env) == \
        ((b"x-api-key", REAL_KEY.encode()), ("ANTHROPIC_API_KEY",))


def test_a_claude_subscription_token_is_relayed_as_a_bearer():
    chosen = plan("claude", Credentials(env={"CLAUDE_CODE_OAUTH_TOKEN": REAL_KEY}), current())
    assert chosen.upstream.key_header() == (b"authorization", f"Bearer {REAL_KEY}".encode())


def test_the_operators_gateway_becomes_the_relays_upstream(monkeypatch):
    monkeypatch.setenv("BOT_GEMINI_BASE_URL", "https://llm.example.internal/v1")
    chosen = plan("gemini", Credentials(env={"GEMINI_API_KEY": REAL_KEY}), current())
    assert chosen.upstream.root == "https://llm.example.internal"


def test_a_codex_login_file_with_neither_tokens_nor_key_stays_direct_with_a_reason():
    chosen = plan("codex", Credentials(files={".codex/auth.json": b"{}"}), current())
    assert chosen.upstream is None and "login file" in chosen.direct_reason


def test_a_rejected_operator_key_names_the_variable_to_replace():
    chosen = plan("codex", Credentials(env={"OPENAI_API_KEY": REAL_KEY}, source="operator"), current())
    assert chosen.upstream.fix_hint == "the operator must replace OPENAI_API_KEY in the bot's environment"


async def test_in_relay_mode_the_clis_invocation_holds_no_credential(tmp_path, recorder, run_id):
    adapter = base.get("claude")
    config = _sandbox(tmp_path, adapter)
    creds = Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}, source="repository")
    async with model_channel("claude", adapter, creds, _ctx(), recorder, run_id, config) as channel:
        episode = base.Episode(prompt="hi", workdir=str(tmp_path), home=tmp_path / "home",
                               credentials=channel.credentials, base_url=channel.base_url)
        invocation = adapter.command(episode)
        token, url = channel.relay.token, channel.relay.url
    everything = " ".join(invocation.argv) + " ".join(invocation.env.values()) + \
        b" ".join(invocation.files.values()).decode()
    assert REAL_KEY not in everything
    assert (invocation.env["ANTHROPIC_API_KEY"], invocation.env["ANTHROPIC_BASE_URL"]) == (token, url)


async def test_in_relay_mode_the_sandbox_reaches_no_provider_host(tmp_path, recorder, run_id):
    adapter = base.get("codex")
    config = _sandbox(tmp_path, adapter)
    async with model_channel("codex", adapter, Credentials(env={"OPENAI_API_KEY": REAL_KEY}), _ctx(),
                             recorder, run_id, config) as channel:
        port = channel.relay.port
    assert config.allowed_hosts == ("pypi.org",) and config.gateways == (f"127.0.0.1:{port}",)


async def test_relay_mode_declares_no_unobserved_model_channel(tmp_path, recorder, run_id):
    adapter = base.get("claude")
    async with model_channel("claude", adapter, Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), _ctx(),
                             recorder, run_id, _sandbox(tmp_path, adapter)):
        pass
    gaps = [e["raw"] for e in recorder.events(run_id) if e["tier"] == "unobserved"]
    assert gaps == ["its context compaction"]


async def test_direct_mode_says_the_key_is_in_the_sandbox(tmp_path, recorder, run_id):
    adapter = base.get("opencode")
    creds = Credentials(env={"MY_LLM_KEY": REAL_KEY})  # a custom provider's key (BOT_OPENCODE_KEY_ENV)
    async with model_channel("opencode", adapter, creds, _ctx(), recorder, run_id, _sandbox(tmp_path, adapter)) as channel:
        assert channel.relay is None and channel.credentials is creds
    gaps = [e["raw"] for e in recorder.events(run_id) if e["tier"] == "unobserved"]
    assert gaps[-1] == ("key in the sandbox: opencode cannot be pointed at the relay with this credential "
                        "(MY_LLM_KEY)")
    assert any(gap.startswith("opencode's model calls") for gap in gaps)


async def test_a_budget_stop_becomes_the_answers_reason(tmp_path, recorder, run_id, fake, monkeypatch):
    from bot.relay.budgets import Budget, Caps
    from tests.relay.conftest import ANTHROPIC, post

    monkeypatch.setenv("BOT_CLAUDE_BASE_URL", fake.url)
    monkeypatch.setenv("BOT_BUDGET_TURN_TOKENS", "1")
    adapter = base.get("claude")
    result = base.Result(ok=False, text="", session_id=None, usage=base.Usage(), events=[],
                         error="cancelled", failure="cancelled")
    async with model_channel("claude", adapter, Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), _ctx(),
                             recorder, run_id, _sandbox(tmp_path, adapter)) as channel:
        assert channel.relay.budget.operator == Caps(turn_tokens=1) and isinstance(channel.relay.budget, Budget)
        await post(channel.relay, *ANTHROPIC)
        await post(channel.relay, *ANTHROPIC)
        channel.explain_stop(result)
    assert (result.failure, result.error) == ("refused", "budget reached: this turn's tokens is 15 tokens of a "
                                              "1 tokens cap (turn_tokens); the operator can raise BOT_BUDGET_TURN_TOKENS")


def test_openai_billing_headers_are_the_operators_configured_ones(monkeypatch):
    monkeypatch.setenv("BOT_OPENAI_ORGANIZATION", "org-operator")
    monkeypatch.setenv("BOT_OPENAI_PROJECT", "proj-operator")
    chosen = plan("codex", Credentials(env={"OPENAI_API_KEY": REAL_KEY}), current())
    assert chosen.upstream.billing == (("OpenAI-Organization", "org-operator"), ("OpenAI-Project", "proj-operator"))


def test_no_billing_header_goes_to_another_provider(monkeypatch):
    monkeypatch.setenv("BOT_OPENAI_ORGANIZATION", "org-operator")
    chosen = plan("claude", Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), current())
    assert chosen.upstream.billing == ()


def test_the_gateway_the_relay_forwards_to_is_the_one_in_the_settings_handed_down(monkeypatch):
    monkeypatch.setenv("BOT_GEMINI_BASE_URL", "https://environment.example.internal/v1")
    settings = Settings({"BOT_GEMINI_BASE_URL": "https://llm.example.internal/v1"})
    chosen = plan("gemini", Credentials(env={"GEMINI_API_KEY": REAL_KEY}), settings)
    assert chosen.upstream.root == "https://llm.example.internal"


def test_the_openai_billing_headers_are_the_ones_in_the_settings_handed_down(monkeypatch):
    monkeypatch.setenv("BOT_OPENAI_ORGANIZATION", "org-environment")
    chosen = plan("codex", Credentials(env={"OPENAI_API_KEY": REAL_KEY}), Settings({"BOT_OPENAI_PROJECT": "proj-handed"}))
    assert chosen.upstream.billing == (("OpenAI-Project", "proj-handed"),)


async def test_in_direct_mode_the_cli_gets_the_gateway_in_the_jobs_settings(tmp_path, recorder, run_id, monkeypatch):
    monkeypatch.delenv("BOT_CODEX_BASE_URL", raising=False)
    adapter = base.get("codex")
    ctx = _ctx()
    ctx.settings = Settings({"BOT_CODEX_BASE_URL": "https://llm.example.internal"})
    async with model_channel("codex", adapter, Credentials(files={".codex/auth.json": b"{}"}), ctx, recorder, run_id,
                             _sandbox(tmp_path, adapter)) as channel:
        assert channel.relay is None
    assert channel.base_url == "https://llm.example.internal"


def test_the_credential_modes_are_judged_by_the_settings_handed_down(monkeypatch):
    monkeypatch.delenv("BOT_OPENCODE_BASE_URL", raising=False)
    modes = credential_modes("opencode", Settings({"BOT_OPENCODE_BASE_URL": "https://llm.example.internal"}))
    assert "Anthropic API key for OpenCode" in modes["direct"]


async def _relay_with(tmp_path: Path, recorder, run_id, settings: Settings):
    adapter = base.get("claude")
    ctx = _ctx()
    ctx.settings = settings
    async with model_channel("claude", adapter, Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), ctx, recorder,
                             run_id, _sandbox(tmp_path, adapter)) as channel:
        return channel.relay


async def test_the_channels_relay_retries_as_the_jobs_settings_say(tmp_path, recorder, run_id, monkeypatch):
    monkeypatch.setenv("BOT_RELAY_RETRIES", "9")
    relay = await _relay_with(tmp_path, recorder, run_id, Settings({"BOT_RELAY_RETRIES": "1"}))
    assert relay.retry.retries == 1


async def test_the_channels_relay_prices_with_the_price_file_in_the_jobs_settings(tmp_path, recorder, run_id,
                                                                                  monkeypatch):
    monkeypatch.delenv("BOT_RELAY_PRICES", raising=False)
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"date": "2026-12-01", "models": {"gateway/fast": {"input": 1, "output": 2}}}))
    relay = await _relay_with(tmp_path, recorder, run_id, Settings({"BOT_RELAY_PRICES": str(prices)}))
    assert relay.prices.price("gateway/fast") is not None


async def test_the_channels_relay_holds_the_operators_caps_in_the_jobs_settings(tmp_path, recorder, run_id,
                                                                               monkeypatch):
    monkeypatch.delenv("BOT_BUDGET_TURN_TOKENS", raising=False)
    relay = await _relay_with(tmp_path, recorder, run_id, Settings({"BOT_BUDGET_TURN_TOKENS": "1"}))
    assert relay.budget.operator == Caps(turn_tokens=1)
