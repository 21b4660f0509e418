"""Retention on a shared database: a machine's sweep drops its local copies of CLI homes; a thread's
session is collected (the stored home deleted, the thread marked collected) only when the thread
itself is past the idle or closed window, decided from the database by whichever machine sweeps."""
from __future__ import annotations

import asyncio
import os
import time

from bot.episode import session_home
from bot.job import conversations
from bot.service import retention, store
from tests.entry_settings import current

DAY = 86_400
NOW = time.time()
KEY = "o/r#1"
ROLLOUT = ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl"
WINDOWS = retention.Policy(events_days=30, home_days=14, budget_bytes=1 << 40)


def _machine(monkeypatch, tmp_path, name: str) -> None:
    """Another machine: its own data dir, the same database."""
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / name))


def _turn(db, idle_days: float) -> None:
    """A turn of KEY on this machine `idle_days` ago, its home stored in the database."""
    conversations.ensure(db, KEY)
    conversations.record_turn(db, KEY, "codex", "session-1", fresh=True)
    db.execute("UPDATE conversations SET last_active_at = ? WHERE key = ?", [NOW - idle_days * DAY, KEY])
    db.execute("UPDATE sessions SET last_used_at = ? WHERE conversation = ?", [NOW - idle_days * DAY, KEY])
    home = session_home.home_dir(current().data_dir, KEY, "codex")
    (home / ROLLOUT).parent.mkdir(parents=True, exist_ok=True)
    (home / ROLLOUT).write_text('{"type":"session_meta"}\n')
    session_home.save(db, current(), KEY, "codex", "here")


def _sweep(db, policy: retention.Policy = WINDOWS) -> retention.Swept:
    return asyncio.run(retention.apply(db, retention.plan(db, policy, current().data_dir, NOW)))


def _local_copy() -> bool:
    return (current().data_dir / "homes" / conversations.slug(KEY)).exists()


def _stored(db) -> bool:
    return any(db.query("SELECT 1 FROM session_homes WHERE conversation = ?", [KEY]))


def test_a_sweep_for_the_disk_budget_drops_only_the_local_copy(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=1)
    _sweep(db, retention.Policy(30, 14, budget_bytes=0))
    assert not _local_copy() and session_home.local_version(current().data_dir, KEY, "codex") == 0
    assert _stored(db) and conversations.session(db, KEY, "codex").session_id == "session-1"
    assert conversations.collected_reason(db, KEY) is None


def test_after_a_budget_sweep_on_one_machine_another_resumes_the_thread(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=1)
    _sweep(db, retention.Policy(30, 14, budget_bytes=0))
    _machine(monkeypatch, tmp_path, "machine-b")
    assert session_home.restore(db, current(), KEY, "codex") is True
    assert (session_home.home_dir(current().data_dir, KEY, "codex") / ROLLOUT).read_text() == '{"type":"session_meta"}\n'


def test_the_machine_that_dropped_its_copy_restores_it_on_the_next_turn(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=1)
    _sweep(db, retention.Policy(30, 14, budget_bytes=0))
    assert session_home.restore(db, current(), KEY, "codex") is True


def test_a_local_copy_unused_here_past_the_window_goes_while_the_thread_is_active(pg_url, monkeypatch,
                                                                                  tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=1)  # the thread is active (on another machine since)
    for marker in (current().data_dir / "session-versions").iterdir():
        os.utime(marker, (NOW - 20 * DAY, NOW - 20 * DAY))  # last saved here 20 days ago
    _sweep(db)
    assert not _local_copy()
    assert _stored(db) and conversations.collected_reason(db, KEY) is None


def test_a_thread_idle_past_the_window_is_collected_by_a_machine_without_a_copy(pg_url, monkeypatch,
                                                                                tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=20)
    _machine(monkeypatch, tmp_path, "machine-c")
    assert _sweep(db).threads == 1
    assert not _stored(db)
    assert conversations.session(db, KEY, "codex").session_id is None
    assert conversations.collected_reason(db, KEY) is not None


def test_a_thread_collected_once_is_not_collected_again_by_another_machine(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=20)
    _machine(monkeypatch, tmp_path, "machine-b")
    session_home.restore(db, current(), KEY, "codex")
    _machine(monkeypatch, tmp_path, "machine-a")
    assert _sweep(db).threads == 1
    _machine(monkeypatch, tmp_path, "machine-b")
    swept = _sweep(db)
    assert swept.threads == 0 and swept.local_homes == 1
    assert not _local_copy() and session_home.local_version(current().data_dir, KEY, "codex") == 0


def test_a_copy_older_than_a_collection_is_replaced_by_the_threads_new_session(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    db = store.connect(settings=current())
    _turn(db, idle_days=20)  # stored as version 1; machine A keeps its copy and its marker
    _machine(monkeypatch, tmp_path, "machine-c")
    _sweep(db)  # collected: the stored home is gone, so the next one is version 1 again
    _machine(monkeypatch, tmp_path, "machine-b")
    home = session_home.home_dir(current().data_dir, KEY, "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    (home / ROLLOUT).write_text('{"type":"new session"}\n')
    assert session_home.save(db, current(), KEY, "codex", "machine-b") == 1
    _machine(monkeypatch, tmp_path, "machine-a")
    assert session_home.restore(db, current(), KEY, "codex") is True
    assert (session_home.home_dir(current().data_dir, KEY, "codex") / ROLLOUT).read_text() == '{"type":"new session"}\n'
