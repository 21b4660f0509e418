"""Each adapter declares its relay channels and resume state; the four CLIs declare exactly what the
bot used for them before the facts moved into the adapters, and the registry is the one list of
agents."""
from __future__ import annotations

import pytest

from adapters import base
from bot import config
from bot.credentials.resolve import OPENCODE_PROVIDER_ENV
from bot.relay.apis import KEY_HEADER
from tests.relay.test_fail_closed import Fifth

# (variable in the resolved credentials, provider, sent as bearer, variables the CLI reads it from)
RELAY_CHANNELS = {
    "claude": (("CLAUDE_CODE_OAUTH_TOKEN", "anthropic", True, ("CLAUDE_CODE_OAUTH_TOKEN",)),
               ("ANTHROPIC_API_KEY", "anthropic", False, ("ANTHROPIC_API_KEY",))),
    "codex": (("OPENAI_API_KEY", "openai", True, ("CODEX_API_KEY",)),
              ("CODEX_API_KEY", "openai", True, ("CODEX_API_KEY",))),
    "gemini": (("GEMINI_API_KEY", "google", False, ("GEMINI_API_KEY",)),),
    "opencode": tuple((variable, provider, KEY_HEADER[provider] == "authorization", (variable,))
                      for provider, variable in OPENCODE_PROVIDER_ENV.items()),
}
RESUME_STATE = {
    "claude": (".claude/projects/*/*.jsonl",),
    "codex": (".codex/sessions/*/*/*/rollout-*.jsonl",),
    "opencode": (".local/share/opencode/opencode.db", ".local/share/opencode/opencode.db-wal",
                 ".local/share/opencode/opencode.db-shm"),
    "gemini": (".gemini/tmp/*/chats/session-*.jsonl",),
}
DIRECT = {"claude": (), "codex": (".codex/auth.json",), "opencode": ("OPENCODE_AUTH_CONTENT", base.ANY_OTHER_KEY),
          "gemini": ()}


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_relay_channels_the_bot_used_for_it(agent):
    declared = tuple((c.variable, c.provider, c.bearer, c.inside_env) for c in base.get(agent).relay_channels)
    assert declared == RELAY_CHANNELS[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_resume_state_the_bot_kept_for_it(agent):
    assert base.get(agent).resume_state == RESUME_STATE[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_credentials_it_runs_with_the_key_in_the_sandbox(agent):
    assert base.get(agent).direct_credentials == DIRECT[agent]


def test_only_opencodes_openai_key_goes_through_an_operator_gateway():
    through = {a: [c.variable for c in base.get(a).relay_channels if c.through_gateway] for a in base.names()}
    assert through == {"claude": ["CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
                       "codex": ["OPENAI_API_KEY", "CODEX_API_KEY"], "opencode": ["OPENAI_API_KEY"],
                       "gemini": ["GEMINI_API_KEY"]}


def test_the_registry_lists_the_four_clis_in_their_order():
    assert base.names() == ["claude", "codex", "opencode", "gemini"]


def test_a_registered_fifth_adapter_is_listed_after_the_four(monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "fifth", Fifth)
    assert base.names() == ["claude", "codex", "opencode", "gemini", "fifth"]


def test_configuration_keeps_no_list_of_agents_of_its_own():
    assert not hasattr(config, "AGENTS")
