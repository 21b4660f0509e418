"""Each adapter declares its relay channels and resume state; the four CLIs declare exactly what the
bot used for them before the facts moved into the adapters, and the registry is the one list of
agents."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters import base
from bot import config
from bot.relay.apis import KEY_HEADER
from tests.relay.test_fail_closed import Fifth

ROOT = Path(__file__).resolve().parents[2]

# OpenCode's provider id -> the key variable it reads
OPENCODE_PROVIDER_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY",
                         "google": "GOOGLE_GENERATIVE_AI_API_KEY", "openrouter": "OPENROUTER_API_KEY",
                         "groq": "GROQ_API_KEY", "mistral": "MISTRAL_API_KEY", "xai": "XAI_API_KEY",
                         "deepseek": "DEEPSEEK_API_KEY"}
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


# What the settings page, credential resolution, the Action and its install step used for each CLI
# before those facts moved into the adapters: (kind, label, variables, file, key shape)
CREDENTIAL_KINDS = {
    "claude": (("oauth_token", "Claude subscription token", ("CLAUDE_CODE_OAUTH_TOKEN",), None, "anthropic_oauth"),
               ("api_key", "Anthropic API key", ("ANTHROPIC_API_KEY",), None, "anthropic_api")),
    "codex": (("auth_json", "ChatGPT subscription (Codex auth.json)", (), ".codex/auth.json", None),
              ("api_key", "OpenAI API key", ("OPENAI_API_KEY", "CODEX_API_KEY"), None, "openai_api")),
    "opencode": (("anthropic_api_key", "Anthropic API key for OpenCode", ("ANTHROPIC_API_KEY",), None, "anthropic_api"),
                 ("openai_api_key", "OpenAI API key for OpenCode", ("OPENAI_API_KEY",), None, "openai_api"),
                 ("auth_json", "OpenCode auth.json", ("OPENCODE_AUTH_CONTENT",), None, None)),
    "gemini": (("api_key", "Gemini API key", ("GEMINI_API_KEY",), None, "gemini_api"),),
}
OPERATOR_ENV = {"claude": ("ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"), "codex": ("OPENAI_API_KEY", "CODEX_API_KEY"),
                "opencode": ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"), "gemini": ("GEMINI_API_KEY",)}
ACTION_KEY_INPUT = {"claude": ("anthropic-api-key", "ANTHROPIC_API_KEY"), "codex": ("openai-api-key", "OPENAI_API_KEY"),
                    "opencode": ("openai-api-key", "OPENAI_API_KEY"), "gemini": ("gemini-api-key", "GEMINI_API_KEY")}
ALIASES = {"claude": ("claude-code", "claudecode"), "codex": ("codex-cli",), "opencode": ("open-code",),
           "gemini": ("gemini-cli",)}


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_credential_kinds_the_settings_page_offered_for_it(agent):
    declared = tuple((k.kind, k.label, k.env, k.file, k.shape) for k in base.get(agent).credential_kinds)
    assert declared == CREDENTIAL_KINDS[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_operator_variables_consulted_for_it(agent):
    assert base.get(agent).operator_variables() == OPERATOR_ENV[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_actions_key_input(agent):
    inputs = base.get(agent).action_inputs
    assert inputs is not None and inputs.key == ACTION_KEY_INPUT[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_declares_the_names_people_write_for_it(agent):
    assert base.get(agent).aliases == ALIASES[agent]


@pytest.mark.parametrize("agent", base.names())
def test_each_cli_is_installed_from_a_package_pinned_in_the_agents_lockfile(agent):
    pinned = json.loads((ROOT / "agents-cli" / "package.json").read_text())["dependencies"]
    assert base.get(agent).npm_package in pinned


def test_only_claude_declares_a_subscription_input():
    assert [a for a in base.names() if base.get(a).action_inputs.subscription] == ["claude"]


def test_opencode_reads_the_key_of_the_provider_its_model_names():
    adapter = base.get("opencode", base.Operator(model="google/gemini-2.5-pro"))
    assert adapter.operator_variables() == ("GOOGLE_GENERATIVE_AI_API_KEY",)


def test_opencode_reads_a_custom_providers_key_variable_when_the_operator_names_one():
    adapter = base.get("opencode", base.Operator(key_env="MOCK_API_KEY", model="anthropic/claude-sonnet-4-5"))
    assert adapter.operator_variables() == ("MOCK_API_KEY",)


def test_an_agent_that_declares_no_action_input_gets_its_key_in_the_steps_env(monkeypatch):
    from bot.cli.action_workflow import render
    from tests.adapters.fifth.agent import Fifth as FifthAgent

    monkeypatch.setitem(base._REGISTRY, "fifth", FifthAgent)
    workflow = render("octo/bot@v1", agent="fifth", sandbox_tier=0)
    step = workflow.split("steps:", 1)[1]
    assert "        env:\n          FIFTH_API_KEY: ${{ secrets.FIFTH_API_KEY }}\n" in step
    assert '          sandbox-tier: "0"\n        env:' in step


def test_a_name_people_write_for_an_agent_is_its_adapters_alias():
    assert [base.canonical(word) for word in ("claude-code", "gemini-cli", "codex", "copilot")] == \
        ["claude", "gemini", "codex", "copilot"]
