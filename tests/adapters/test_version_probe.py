"""The CLI version recorded for a run is probed without running anything a checkout holds
(bot/episode/cli_version.py): fresh directory, scrubbed environment, the operator's or pinned binary."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from adapters import base
from bot.episode import cli_version
from tests.entry_settings import current


@pytest.fixture(autouse=True)
def no_cached_versions(monkeypatch, tmp_path):
    monkeypatch.setattr(cli_version, "_versions", {})
    monkeypatch.delenv("BOT_CODEX_BIN", raising=False)
    monkeypatch.setenv("BOT_AGENTS_DIR", str(tmp_path / "agents"))  # no pinned codex unless a test adds one


def _script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def checkout(tmp_path, monkeypatch) -> Path:
    """A repository checkout as `bot run` sees it: the process's directory, with a planted CLI."""
    repo = tmp_path / "checkout"
    _script(repo / "node_modules/.bin/codex", f"touch {tmp_path / 'PLANTED-RAN'}\necho 9.9.9")
    (repo / ".npmrc").write_text(f"node-options=--require {repo / 'evil.js'}\n")
    monkeypatch.chdir(repo)
    return repo


async def _version() -> str | None:
    return await cli_version.adapter_version(base.get("codex", current().operator_for("codex")))


async def test_a_planted_cli_in_the_checkout_is_never_run(checkout, tmp_path, monkeypatch):
    """Even with a relative `node_modules/.bin` on PATH (a common dev setup), the checkout's `codex` does not run."""
    monkeypatch.setenv("PATH", f"node_modules/.bin{os.pathsep}{os.environ['PATH']}")
    assert await _version() != "9.9.9"
    assert not (tmp_path / "PLANTED-RAN").exists()


async def test_a_relative_binary_path_is_not_resolved_against_the_checkout(checkout, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_CODEX_BIN", "node_modules/.bin/codex")
    assert await _version() is None and not (tmp_path / "PLANTED-RAN").exists()


async def test_the_probe_sees_no_keys_and_runs_outside_the_checkout(checkout, tmp_path, monkeypatch):
    """The operator's binary answers, but without provider keys, NODE_OPTIONS or the checkout as cwd."""
    seen = tmp_path / "seen"
    operator_bin = _script(tmp_path / "operator/codex", f"env > {seen}\npwd >> {seen}\necho codex-cli 1.2.3")
    monkeypatch.setenv("BOT_CODEX_BIN", str(operator_bin))
    monkeypatch.setenv("CODEX_API_KEY", "sk-probe-secret-codex")
    monkeypatch.setenv("NODE_OPTIONS", f"--require {checkout / 'evil.js'}")
    assert await _version() == "1.2.3"
    text = seen.read_text()
    assert "sk-probe-secret-codex" not in text and "NODE_OPTIONS" not in text
    assert str(checkout) not in text


async def test_the_pinned_install_in_the_agents_dir_is_probed(tmp_path):
    _script(tmp_path / "agents/node_modules/.bin/codex", "echo codex-cli 0.77.1")
    assert await _version() == "0.77.1"
