"""bot/runner.py with real processes under the tier-0 jail and a minimal adapter whose "CLI" is
a short Python program (the runner's behaviour, not a CLI's, is under test here)."""
from __future__ import annotations

import asyncio
import json
import stat
import sys

import pytest

from adapters.base import Bridge, CliAdapter, Episode, Event, EventKind, Invocation
from bot.episode.runner import run_episode, write_home_files
from sandbox.base import Limits, SandboxConfig
from sandbox.tier0 import Tier0Spawner


class ScriptAdapter(CliAdapter):
    """Runs `python -c SCRIPT`; each stdout line {"text": ...} is a text event."""

    name = "script"

    def __init__(self, script: str, files: dict[str, bytes] | None = None, last: str | None = None):
        self.script, self.files, self.last = script, files or {}, last

    def command(self, episode: Episode) -> Invocation:
        return Invocation(argv=[sys.executable, "-c", self.script], files=self.files,
                          last_message_file=self.last, env={"SECRET_FOR_TEST": "sk-runner-secret-000111"})

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        return [Event(EventKind.TEXT, text=str(obj["text"]), raw=raw)]


def _setup(tmp_path, **episode_fields):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    episode = Episode(prompt="p", workdir=str(work), home=home, **episode_fields)
    config = SandboxConfig(workdir=work, home=home, min_tier=0, limits=Limits(timeout_s=30))
    return episode, config


def _printer(*texts: str, then: str = "") -> str:
    lines = "".join(f"print({json.dumps(json.dumps({'text': t}))}, flush=True)\n" for t in texts)
    return lines + then


async def test_every_line_reaches_on_event_in_order(tmp_path):
    """A sync on_event sees each event as parsed, in order, and the Result keeps them all."""
    seen = []
    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(_printer("one", "two", "three")), episode, Tier0Spawner(), config,
                               on_event=seen.append)
    assert [e.text for e in seen] == ["one", "two", "three"] and result.events == seen
    assert (result.ok, result.text, result.exit_code) == (True, "three", 0)


async def test_async_on_event_is_awaited(tmp_path):
    """An async on_event is awaited for each event."""
    seen = []

    async def record(event):
        await asyncio.sleep(0)
        seen.append(event.text)

    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(_printer("a", "b")), episode, Tier0Spawner(), config, on_event=record)
    assert seen == ["a", "b"]


async def test_failing_observer_does_not_lose_events(tmp_path):
    """An on_event that raises is logged; the record still holds every event."""
    def broken(event):
        raise RuntimeError("observer bug")

    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(_printer("a", "b")), episode, Tier0Spawner(), config, on_event=broken)
    assert [e.text for e in result.events] == ["a", "b"]


async def test_cancel_kills_the_process(tmp_path):
    """Setting cancel after the first event kills the CLI; the Result says cancelled."""
    cancel = asyncio.Event()
    episode, config = _setup(tmp_path)
    script = _printer("working", then="import time; time.sleep(60)\nprint('never')")
    result = await run_episode(ScriptAdapter(script), episode, Tier0Spawner(), config,
                               on_event=lambda e: cancel.set(), cancel=cancel)
    assert (result.ok, result.failure, result.error) == (False, "cancelled", "cancelled")
    assert [e.text for e in result.events] == ["working"] and result.outcome["killed"]


async def test_timeout_is_reported(tmp_path):
    """A CLI that outlives its time limit is killed and the Result names the limit."""
    episode, config = _setup(tmp_path)
    config.limits = Limits(timeout_s=1)
    result = await run_episode(ScriptAdapter("import time; time.sleep(30)"), episode, Tier0Spawner(), config)
    assert (result.ok, result.failure) == (False, "timeout") and "1 s time limit" in result.error


async def test_very_long_lines_are_parsed_whole(tmp_path):
    """A 3 MB line (a large tool result) is one event, not a crash."""
    episode, config = _setup(tmp_path)
    script = "import json; print(json.dumps({'text': 'x' * 3_000_000}))"
    result = await run_episode(ScriptAdapter(script), episode, Tier0Spawner(), config)
    assert len(result.events) == 1 and len(result.text) == 3_000_000


async def test_nonzero_exit_with_nothing_parsed_quotes_stderr(tmp_path):
    """Exit 3 with only stderr becomes an error quoting it, with secrets redacted."""
    episode, config = _setup(tmp_path)
    script = "import os, sys; sys.stderr.write('fatal: bad key ' + os.environ['SECRET_FOR_TEST'] + '\\n'); sys.exit(3)"
    adapter = ScriptAdapter(script)
    episode.credentials.env["SECRET_FOR_TEST"] = "sk-runner-secret-000111"
    result = await run_episode(adapter, episode, Tier0Spawner(), config)
    assert (result.ok, result.failure, result.exit_code) == (False, "exit", 3)
    assert "fatal: bad key" in result.error and "sk-runner-secret-000111" not in result.error + result.stderr_tail


async def test_refused_floor_is_a_failed_result(tmp_path):
    """A spawner that cannot meet the floor yields a 'refused' Result; nothing ran."""
    episode, config = _setup(tmp_path)
    config.min_tier = 1
    result = await run_episode(ScriptAdapter(_printer("x")), episode, Tier0Spawner(), config)
    assert (result.ok, result.failure, result.events) == (False, "refused", [])


async def test_strict_episode_without_bridge_connection_fails(tmp_path):
    """A green turn in strict mode that never listed the bridge's tools is a bridge failure."""
    episode, config = _setup(tmp_path, bridge=Bridge(url="http://127.0.0.1:1/mcp", token="tok-123456789"))
    result = await run_episode(ScriptAdapter(_printer("done")), episode, Tier0Spawner(), config,
                               bridge_connected=asyncio.Event())
    assert (result.ok, result.failure) == (False, "bridge")


async def test_last_message_file_is_read_and_stale_one_removed(tmp_path):
    """The answer file is read after the run; one left from an earlier turn is never reported."""
    episode, config = _setup(tmp_path)
    (tmp_path / "home" / ".bot").mkdir(parents=True)
    (tmp_path / "home" / ".bot" / "last.txt").write_text("stale answer")
    result = await run_episode(ScriptAdapter("pass", last=".bot/last.txt"), episode, Tier0Spawner(), config)
    assert (result.ok, result.failure) == (False, "empty")


def test_home_files_are_owner_only(tmp_path):
    """Files the adapter asks for land in HOME with mode 0600."""
    write_home_files(tmp_path, Invocation(argv=[], files={".codex/auth.json": b"{}"}))
    assert stat.S_IMODE((tmp_path / ".codex" / "auth.json").stat().st_mode) == 0o600


def test_home_files_cannot_escape_home(tmp_path):
    """A relative path climbing out of HOME is rejected."""
    with pytest.raises(ValueError):
        write_home_files(tmp_path / "home", Invocation(argv=[], files={"../evil": b"x"}))


async def test_credential_files_are_removed_after_the_run(tmp_path):
    """Files marked ephemeral (credentials) exist while the CLI runs and are gone afterwards."""
    class CredentialAdapter(ScriptAdapter):
        def command(self, episode):
            invocation = super().command(episode)
            invocation.ephemeral = (".codex/auth.json",)
            return invocation

    episode, config = _setup(tmp_path)
    script = "import json, pathlib; print(json.dumps({'text': pathlib.Path('../home/.codex/auth.json').read_text()}))"
    adapter = CredentialAdapter(script, files={".codex/auth.json": b"token-inside"})
    result = await run_episode(adapter, episode, Tier0Spawner(), config)
    assert result.text == "token-inside" and not (tmp_path / "home" / ".codex" / "auth.json").exists()


async def test_missing_binary_is_a_failed_result(tmp_path, monkeypatch):
    """A CLI binary that does not exist yields a 'missing' Result naming it, not an exception."""
    from adapters import base
    from tests.entry_settings import current
    monkeypatch.setenv("BOT_CLAUDE_BIN", str(tmp_path / "no-claude"))
    episode, config = _setup(tmp_path)
    result = await run_episode(base.get("claude", current().operator_for("claude")), episode, Tier0Spawner(), config)
    assert (result.ok, result.failure) == (False, "missing") and "no-claude" in result.error


async def test_last_message_symlink_to_a_host_file_is_not_read(tmp_path):
    """An answer file the CLI replaced by a symlink never carries a host file into the answer."""
    host_file = tmp_path / "operator-secret.env"
    host_file.write_text("OPERATOR_KEY=sk-operator-only-777")
    script = (f"import os; os.makedirs('../home/.bot', exist_ok=True); "
              f"os.symlink({str(host_file)!r}, '../home/.bot/last.txt')")
    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(script, last=".bot/last.txt"), episode, Tier0Spawner(), config)
    assert "sk-operator-only-777" not in (result.text or "") + (result.error or "")


def test_home_file_symlink_planted_by_the_cli_is_replaced_not_followed(tmp_path):
    """A config path the CLI turned into a symlink is replaced in HOME; the target is untouched."""
    home, host_file = tmp_path / "home", tmp_path / "host.txt"
    (home / ".codex").mkdir(parents=True)
    host_file.write_text("host")
    (home / ".codex" / "config.toml").symlink_to(host_file)
    write_home_files(home, Invocation(argv=[], files={".codex/config.toml": b"model = 'x'"}))
    assert host_file.read_text() == "host"
    assert (home / ".codex" / "config.toml").read_bytes() == b"model = 'x'"


def test_home_file_fifo_planted_by_the_cli_is_replaced_not_opened(tmp_path):
    """A FIFO the CLI left at a config path is replaced (opening it would block the bot)."""
    import os
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    os.mkfifo(home / ".codex" / "auth.json")
    reader = os.open(home / ".codex" / "auth.json", os.O_RDONLY | os.O_NONBLOCK)  # unfixed: no hang
    try:
        write_home_files(home, Invocation(argv=[], files={".codex/auth.json": b"{}"}))
        assert os.read(reader, 100) == b""
        assert (home / ".codex" / "auth.json").read_bytes() == b"{}"
    finally:
        os.close(reader)


async def test_ephemeral_credential_under_a_symlinked_folder_spares_the_host_file(tmp_path):
    """Removing credentials after the run never deletes through a folder the CLI symlinked away."""
    host_dir = tmp_path / "host"
    host_dir.mkdir()
    (host_dir / "auth.json").write_text("host file")

    class CredentialAdapter(ScriptAdapter):
        def command(self, episode):
            invocation = super().command(episode)
            invocation.ephemeral = (".codex/auth.json",)
            return invocation

    script = (f"import os, shutil; shutil.rmtree('../home/.codex'); "
              f"os.symlink({str(host_dir)!r}, '../home/.codex')")
    episode, config = _setup(tmp_path)
    await run_episode(CredentialAdapter(script, files={".codex/auth.json": b"t"}), episode,
                      Tier0Spawner(), config)
    assert (host_dir / "auth.json").read_text() == "host file"


def test_home_reached_through_a_symlinked_data_dir_still_gets_its_files(tmp_path):
    """The bot's own HOME path may pass through a symlink (a linked data dir); files still land."""
    (tmp_path / "real").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "real")
    write_home_files(tmp_path / "linked", Invocation(argv=[], files={".codex/config.toml": b"x"}))
    assert (tmp_path / "real" / ".codex" / "config.toml").read_bytes() == b"x"
