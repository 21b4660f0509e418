"""The job's core receives the entry point's settings (or the values it needs) and never reads the
environment: each test points the environment one way and the settings it hands another."""
from __future__ import annotations

import asyncio

from bot.config_table import variable
from bot.job import conversations, thread_text
from bot.job.runner import run_episode
from bot.service import retention, store
from bot.workspace.worktrees import conversation_slug
from sandbox import disk
from sandbox.tier0 import Tier0Spawner
from tests.adapters.test_runner import ScriptAdapter, _printer, _setup


def _elsewhere(tmp_path):
    """A data dir the test hands down, other than the one the environment names (tmp_path/data)."""
    return tmp_path / "handed"


def test_the_attachments_folder_is_made_in_the_data_dir_it_is_handed(tmp_path):
    folder = thread_text.attachments_dir(_elsewhere(tmp_path), "octo/repo#2")
    assert folder == _elsewhere(tmp_path) / "attachments" / conversation_slug("octo/repo#2")
    assert folder.is_dir() and not (tmp_path / "data" / "attachments").exists()


def test_a_cli_home_is_made_in_the_data_dir_it_is_handed(tmp_path):
    home = conversations.home_dir(_elsewhere(tmp_path), "octo/repo#2", "codex")
    assert home == _elsewhere(tmp_path) / "homes" / conversation_slug("octo/repo#2") / "codex"
    assert home.is_dir() and not (tmp_path / "data" / "homes").exists()


def _watch_recording(monkeypatch) -> list[float]:
    """The intervals the disk watch is started with; the watch itself waits to be cancelled."""
    asked: list[float] = []

    async def watch(quotas: list[disk.Quota], interval_s: float) -> disk.Breach:
        asked.append(interval_s)
        await asyncio.Event().wait()
        raise AssertionError("the watch is cancelled when the episode ends")

    monkeypatch.setattr(disk, "watch", watch)
    return asked


async def test_the_disk_watch_looks_at_the_interval_the_episode_is_handed(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DISK_WATCH_INTERVAL", "7")
    asked = _watch_recording(monkeypatch)
    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(_printer("done")), episode, Tier0Spawner(), config, disk_watch_s=0.25)
    assert asked == [0.25]


async def test_an_episode_handed_no_disk_watch_interval_looks_at_the_table_default(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DISK_WATCH_INTERVAL", "7")
    asked = _watch_recording(monkeypatch)
    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(_printer("done")), episode, Tier0Spawner(), config)
    assert asked == [float(str(variable("BOT_DISK_WATCH_INTERVAL").default))]


def test_retention_drops_a_threads_home_in_the_data_dir_it_sweeps(tmp_path):
    home = conversations.home_dir(_elsewhere(tmp_path), "o/r#1", "codex")
    (home / "rollout.jsonl").write_text("the CLI's own transcript\n")
    retention.collect_home(store.connect(), "o/r#1", _elsewhere(tmp_path))
    assert not home.exists()
