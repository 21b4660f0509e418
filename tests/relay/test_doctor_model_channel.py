"""`bot doctor` says, per agent, which credential kinds run through the model relay and which run in
direct mode with the key in the sandbox, as the episode's model channel would choose; and the wire APIs
the relay speaks, read from their records."""
from __future__ import annotations

import json

from adapters import base as adapters
from adapters.base import RelayChannel
from bot.cli import doctor
from bot.cli.doctor_wire_apis import wire_api_section
from bot.relay import wire_api
from tests.adapters.fifth.agent import Fifth
from tests.entry_settings import current


def _rows() -> dict[str, dict]:
    return {row["agent"]: row for row in doctor.channel_rows(current())}


def test_doctor_lists_the_codex_chatgpt_login_as_relayed():
    codex = _rows()["codex"]
    assert codex["direct"] == []
    assert codex["relay"] == ["ChatGPT subscription (Codex auth.json)", "OpenAI API key"]


def test_doctor_lists_only_opencodes_login_file_as_key_in_the_sandbox():
    opencode = _rows()["opencode"]
    assert {"Anthropic API key for OpenCode", "OpenAI API key for OpenCode",
            "GOOGLE_GENERATIVE_AI_API_KEY (operator)"} <= set(opencode["relay"])
    assert opencode["direct"] == ["OpenCode auth.json"]


def test_doctor_lists_every_claude_and_gemini_credential_kind_as_relayed():
    rows = _rows()
    assert (rows["claude"]["direct"], rows["gemini"]["direct"]) == ([], [])
    assert rows["claude"]["relay"] == ["Claude subscription token", "Anthropic API key"]


def test_doctor_table_names_the_direct_kinds_key_in_the_sandbox():
    text = doctor.render([], [], doctor.channel_rows(current()))
    line = next(line for line in text.splitlines() if line.startswith("opencode"))
    assert "relay: Anthropic API key for OpenCode" in line and "key in the sandbox: OpenCode auth.json" in line


def test_doctor_json_holds_the_model_channel_per_agent(capsys):
    doctor.main(["--json"])
    channel = json.loads(capsys.readouterr().out)["model_channel"]
    assert [row["agent"] for row in channel] == ["claude", "codex", "opencode", "gemini"]


def test_doctor_lists_each_wire_api_with_its_providers_paths_and_key_test():
    rows = {row["check"]: row for row in wire_api_section(current())["rows"]}
    assert set(rows) == {f"{api.title} ({api.name})" for api in wire_api.records()}
    gemini = rows["Google Gemini (gemini)"]
    assert gemini["ok"] and gemini["detail"] == ("providers: google; POST /v1beta/models/<model>:generateContent|"
                                                 "streamGenerateContent|countTokens; key test: yes")
    assert rows["OpenAI Chat Completions (chat)"]["detail"].endswith("key test: none")


def test_doctor_fails_a_relay_channel_whose_provider_no_wire_api_declares(monkeypatch):
    class Lost(Fifth):
        name = "lost"
        relay_channels = (RelayChannel("LOST_API_KEY", "nowhere", True, ("LOST_API_KEY",)),)

    monkeypatch.setitem(adapters._REGISTRY, "lost", Lost)
    section = wire_api_section(current())
    assert section["ok"] is False
    assert section["rows"][-1] == {"check": "lost's relay channel LOST_API_KEY", "ok": False,
                                   "detail": "names the provider nowhere, which no wire API declares: "
                                             "its runs are refused"}
