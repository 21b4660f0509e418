"""detect() against the real CLIs and stand-ins for missing or too-old builds; `bot doctor`."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from adapters import base
from bot import config
from bot.cli import doctor
from tests.entry_settings import current

pytestmark = pytest.mark.e2e  # runs the real CLIs' probes (a few seconds each)

AGENTS = tuple(base.names())  # the registry: every adapter


def _detect(agent: str, tmp_path: Path):
    adapter = base.get(agent, current().operator_for(agent))
    return adapter.detect(doctor.probe_for(adapter, tmp_path, config.Settings(dict(os.environ))))


@pytest.mark.parametrize("agent", AGENTS)
def test_installed_cli_reports_its_pinned_version(agent, tmp_path):
    """The project-local CLI answers --version with at least the minimum version."""
    ready = _detect(agent, tmp_path)
    assert ready.available and not ready.refuse and ready.version
    assert base.version_tuple(ready.version) >= base.version_tuple(base.get(agent).min_version)


def test_missing_binary_is_refused_with_the_fix(tmp_path, monkeypatch):
    """A BOT_<AGENT>_BIN that does not exist refuses and names the fix."""
    monkeypatch.setenv("BOT_CODEX_BIN", str(tmp_path / "nope"))
    ready = _detect("codex", tmp_path)
    assert (ready.available, ready.refuse) == (False, True) and "BOT_CODEX_BIN" in ready.reason


def test_too_old_build_is_refused(tmp_path, monkeypatch):
    """A build older than the pinned minimum cannot be locked down: refused."""
    old = tmp_path / "old-gemini"
    old.write_text("#!/bin/sh\necho 0.1.0\n")
    old.chmod(0o755)
    monkeypatch.setenv("BOT_GEMINI_BIN", str(old))
    ready = _detect("gemini", tmp_path)
    assert (ready.refuse, ready.version) == (True, "0.1.0") and "older than the minimum" in ready.reason


def test_claude_logged_in_by_its_own_auth_probe(tmp_path, monkeypatch):
    """With ANTHROPIC_API_KEY set, `claude auth status` reports logged in."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-dummy-for-detect")
    ready = _detect("claude", tmp_path)
    assert ready.logged_in and "api_key" in ready.reason


def test_logged_out_cli_gets_an_actionable_reason(tmp_path):
    """Without credentials Codex is available but not logged in, and the reason names the variable."""
    ready = _detect("codex", tmp_path)
    assert (ready.available, ready.logged_in, ready.refuse) == (True, False, False)
    assert "CODEX_API_KEY" in ready.reason


def test_gateway_counts_as_logged_in(tmp_path, monkeypatch):
    """An operator gateway (BOT_GEMINI_BASE_URL) holds the key: ready."""
    monkeypatch.setenv("BOT_GEMINI_BASE_URL", "http://127.0.0.1:9")
    assert _detect("gemini", tmp_path).logged_in


def test_doctor_json_lists_every_agent_and_the_floor(capsys):
    """`bot doctor --json` prints one row per agent and the sandbox floor checks."""
    doctor.main(["--json"])
    report = json.loads(capsys.readouterr().out)
    assert [row["agent"] for row in report["agents"]] == sorted(AGENTS)
    assert report["sandbox"] and all({"check", "ok", "detail"} <= set(row) for row in report["sandbox"])


def test_doctor_fails_when_an_agent_is_refused(tmp_path, monkeypatch, capsys):
    """A missing CLI makes `bot doctor` exit 1 and say REFUSED in the table."""
    monkeypatch.setenv("BOT_OPENCODE_BIN", str(tmp_path / "missing"))
    assert doctor.main([]) == 1
    assert "REFUSED" in capsys.readouterr().out
