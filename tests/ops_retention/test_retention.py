"""Retention: what is past the windows goes, nothing else; the budget takes caches LRU first."""
from __future__ import annotations

import asyncio
import os
import subprocess
import time

import pytest
from gidgethub import sansio

from bot.cli import gc
from bot.episode import session_home
from bot.job import conversations
from bot.record.recorder import Recorder
from bot.service import retention, store
from bot.web import intake
from bot.workspace import pool, worktrees
from tests.entry_settings import current, database

DAY = 86_400
NOW = time.time()


def _iso(days_ago: float) -> str:
    return retention._iso(NOW - days_ago * DAY)


def _run(db, run_id: str, finished_days_ago: float | None) -> None:
    """A run row and one event, as the recorder writes them."""
    finished = None if finished_days_ago is None else _iso(finished_days_ago)
    db.execute("INSERT INTO runs (id, conversation, agent, started_at, finished_at, status) "
               "VALUES (?, 'o/r#1', 'codex', ?, ?, ?)", [run_id, _iso(90), finished,
                                                        "running" if finished is None else "ok"])
    db.execute("INSERT INTO run_events (run_id, seq, ts, tier, kind, raw) VALUES (?, 1, ?, 'attested', "
               "'message', 'a transcript line')", [run_id, _iso(90)])


def _events(db, run_id: str) -> int:
    return len(list(db.query("SELECT seq FROM run_events WHERE run_id = ?", [run_id])))


def _thread(db, key: str, idle_days: float, agent: str = "codex") -> None:
    conversations.ensure(db, key)
    conversations.record_turn(db, key, agent, f"session-{key}", fresh=True)
    db.execute("UPDATE conversations SET last_active_at = ? WHERE key = ?", [NOW - idle_days * DAY, key])
    db.execute("UPDATE sessions SET last_used_at = ? WHERE conversation = ?", [NOW - idle_days * DAY, key])
    home = session_home.home_dir(current().data_dir, key, agent)
    (home / ".codex").mkdir()
    (home / ".codex" / "rollout.jsonl").write_text("the CLI's own transcript\n")


def _scratch(run_id: str, days_old: float):
    folder = current().data_dir / "runs" / run_id
    folder.mkdir(parents=True)
    (folder / "out.txt").write_text("scratch")
    os.utime(folder, (NOW - days_old * DAY, NOW - days_old * DAY))
    return folder


@pytest.fixture
def db():
    database = store.connect(settings=current())
    if "runs" not in database.table_names():  # the recorder's tables, where no migration made them
        Recorder(database)
    return database


POLICY = retention.Policy(events_days=30, home_days=14, budget_bytes=1 << 40)


def test_run_events_past_the_window_go_and_their_runs_stay(db):
    _run(db, "old", finished_days_ago=40)
    _run(db, "recent", finished_days_ago=2)
    _run(db, "running", finished_days_ago=None)
    asyncio.run(retention.apply(db, retention.plan(db, POLICY, current().data_dir, NOW)))
    assert _events(db, "old") == 0
    assert _events(db, "recent") == 1 and _events(db, "running") == 1
    assert {row["id"] for row in db.query("SELECT id FROM runs")} == {"old", "recent", "running"}


def test_scratch_folders_past_the_window_go(db):
    old, recent = _scratch("old", 40), _scratch("recent", 2)
    asyncio.run(retention.apply(db, retention.plan(db, POLICY, current().data_dir, NOW)))
    assert not old.exists() and recent.exists()


def test_cli_homes_of_threads_idle_past_the_window_go_and_their_sessions_are_not_resumable(db):
    _thread(db, "o/r#1", idle_days=20)
    _thread(db, "o/r#2", idle_days=3)
    asyncio.run(retention.apply(db, retention.plan(db, POLICY, current().data_dir, NOW)))
    homes = current().data_dir / "homes"
    assert not (homes / conversations.slug("o/r#1")).exists()
    assert (homes / conversations.slug("o/r#2") / "codex" / ".codex" / "rollout.jsonl").exists()
    assert conversations.session(db, "o/r#1", "codex").session_id is None
    assert conversations.session(db, "o/r#2", "codex").session_id == "session-o/r#2"
    assert conversations.collected_reason(db, "o/r#1") == "the saved session was cleared after 20 days without activity"
    assert conversations.collected_reason(db, "o/r#2") is None


def test_a_thread_with_a_queued_job_keeps_its_home(db):
    _thread(db, "o/r#1", idle_days=20)
    store.write(db, lambda conn: store.enqueue_delivery(
        conn, delivery_id="d1", event="issue_comment", action="created", kind="run", conversation="o/r#1",
        spec={}))
    asyncio.run(retention.apply(db, retention.plan(db, POLICY, current().data_dir, NOW)))
    assert (current().data_dir / "homes" / conversations.slug("o/r#1")).exists()
    assert conversations.session(db, "o/r#1", "codex").session_id == "session-o/r#1"


def test_a_link_planted_in_a_home_is_removed_not_followed(db, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the bot's")
    _thread(db, "o/r#1", idle_days=20)
    (session_home.home_dir(current().data_dir, "o/r#1", "codex") / "escape").symlink_to(outside)
    asyncio.run(retention.apply(db, retention.plan(db, POLICY, current().data_dir, NOW)))
    assert (outside / "keep.txt").read_text() == "not the bot's"


def test_a_sweep_plans_in_the_data_dir_it_is_handed(db, tmp_path):
    handed = tmp_path / "handed"
    folder = handed / "runs" / "old"
    folder.mkdir(parents=True)
    os.utime(folder, (NOW - 40 * DAY, NOW - 40 * DAY))
    _scratch("also-old", days_old=40)  # in the environment's data dir: not this sweep's
    assert retention.plan(db, POLICY, handed, NOW).scratch == [folder]


def test_a_collected_thread_loses_its_attachments_in_the_data_dir_it_is_handed(db, tmp_path):
    _thread(db, "o/r#1", idle_days=20)
    attachments = tmp_path / "handed" / "attachments" / conversations.slug("o/r#1")
    attachments.mkdir(parents=True)
    (attachments / "image.png").write_bytes(b"an upload")
    retention.collect_home(db, "o/r#1", tmp_path / "handed")
    assert not attachments.exists()


def test_a_fresh_turn_clears_the_collected_note(db):
    _thread(db, "o/r#1", idle_days=20)
    retention.collect_home(db, "o/r#1", current().data_dir)
    conversations.record_turn(db, "o/r#1", "codex", "session-new", fresh=True)
    assert conversations.collected_reason(db, "o/r#1") is None


def test_dry_run_prints_the_plan_and_removes_nothing(db, capsys):
    _run(db, "old", finished_days_ago=40)
    _thread(db, "o/r#1", idle_days=20)
    assert gc.main(["--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove: run events of 1 run(s)" in out and "would remove: CLI home of o/r#1" in out
    assert _events(db, "old") == 1
    assert conversations.session(db, "o/r#1", "codex").session_id == "session-o/r#1"


def test_gc_removes_what_the_dry_run_listed(db, capsys):
    _run(db, "old", finished_days_ago=40)
    assert gc.main([]) == 0
    assert "removed: 1 event(s) of 1 run(s)" in capsys.readouterr().out
    assert _events(db, "old") == 0


# the disk budget --------------------------------------------------------------------------------

def _git(*args: str, cwd=None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _mirror_with_spare(tmp_path, name: str, used_days_ago: float):
    """A bare mirror under the data dir with one parked spare worktree holding 1 MiB."""
    source = tmp_path / f"src-{name}"
    _git("init", "-q", "-b", "main", str(source))
    (source / "README").write_text(name)
    _git("-C", str(source), "add", ".")
    _git("-C", str(source), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "i")
    mirror = worktrees.mirror_path(f"o/{name}", current().data_dir)
    mirror.parent.mkdir(parents=True, exist_ok=True)
    _git("clone", "--bare", "-q", str(source), str(mirror))
    spare = pool.spare_root(mirror) / "slot1"
    spare.parent.mkdir(parents=True)
    _git("worktree", "add", "-q", "--detach", str(spare), "main", cwd=mirror)
    (spare / "blob").write_bytes(os.urandom(1 << 20))
    stamp = NOW - used_days_ago * DAY
    (mirror / worktrees.LAST_USED).touch()
    os.utime(mirror / worktrees.LAST_USED, (stamp, stamp))
    os.utime(spare, (stamp, stamp))
    return mirror, spare


def test_over_the_budget_the_least_recently_used_spare_goes_first(db, tmp_path):
    old_mirror, old_spare = _mirror_with_spare(tmp_path, "old", used_days_ago=5)
    new_mirror, new_spare = _mirror_with_spare(tmp_path, "new", used_days_ago=1)
    used = retention.tree_bytes(current().data_dir)
    policy = retention.Policy(30, 14, budget_bytes=used - (512 << 10))
    asyncio.run(retention.apply(db, retention.plan(db, policy, current().data_dir, NOW)))
    assert not old_spare.exists() and new_spare.exists()
    assert (old_mirror / "HEAD").exists() and (new_mirror / "HEAD").exists()


def test_far_over_the_budget_spares_then_the_least_recently_used_mirror_go(db, tmp_path):
    old_mirror, old_spare = _mirror_with_spare(tmp_path, "old", used_days_ago=5)
    new_mirror, new_spare = _mirror_with_spare(tmp_path, "new", used_days_ago=1)
    used = retention.tree_bytes(current().data_dir)
    spares = retention.tree_bytes(old_spare) + retention.tree_bytes(new_spare)
    policy = retention.Policy(30, 14, budget_bytes=used - spares - (4 << 10))
    swept = asyncio.run(retention.apply(db, retention.plan(db, policy, current().data_dir, NOW)))
    assert not old_spare.exists() and not new_spare.exists()
    assert swept.mirrors == ["o/old"]
    assert not old_mirror.exists() and (new_mirror / "HEAD").exists()


def test_within_the_budget_no_cache_goes(db, tmp_path):
    _, old_spare = _mirror_with_spare(tmp_path, "old", used_days_ago=5)
    policy = retention.Policy(30, 14, budget_bytes=retention.tree_bytes(current().data_dir) + (1 << 20))
    planned = retention.plan(db, policy, current().data_dir, NOW)
    assert planned.spares == [] and planned.mirrors_over_bytes == 0


def test_the_service_sweeper_removes_what_is_past_the_windows(db):
    _run(db, "old", finished_days_ago=40)

    async def until_swept() -> None:
        sweeper = retention.Sweeper(interval_s=0.01, policy=POLICY, data_dir=current().data_dir,
                                    connect=database).start()
        try:
            while _events(db, "old"):
                await asyncio.sleep(0.01)
        finally:
            await sweeper.stop()

    asyncio.run(asyncio.wait_for(until_swept(), 60))
    assert _events(db, "old") == 0


# closed threads --------------------------------------------------------------------------------

def _closed_event(number: int, action: str = "closed") -> dict:
    return {"action": action, "issue": {"number": number}, "repository": {"full_name": "o/r"}}


def _closed_days_ago(db, key: str, days: float) -> None:
    db.execute("UPDATE notices SET created_at = ? WHERE conversation = ? AND kind = ?",
               [NOW - days * DAY, key, retention.CLOSED])


def test_a_thread_closed_past_its_window_loses_its_home_before_the_idle_window(db):
    _thread(db, "o/r#1", idle_days=4)
    _thread(db, "o/r#2", idle_days=4)
    assert retention.note_closed(db, "issues", _closed_event(1))
    assert retention.note_closed(db, "issues", _closed_event(2))
    _closed_days_ago(db, "o/r#1", 3)
    _closed_days_ago(db, "o/r#2", 1)
    planned = retention.plan(db, retention.Policy(30, 14, 1 << 40, closed_days=2), current().data_dir, NOW)
    assert planned.threads == ["o/r#1"]


def test_a_reopened_thread_is_kept_like_any_other(db):
    _thread(db, "o/r#1", idle_days=4)
    retention.note_closed(db, "issues", _closed_event(1))
    _closed_days_ago(db, "o/r#1", 3)
    assert retention.note_closed(db, "issues", _closed_event(1, "reopened"))
    assert retention.plan(db, retention.Policy(30, 14, 1 << 40, closed_days=2), current().data_dir, NOW).threads == []


def test_a_comment_after_the_close_keeps_the_home(db):
    _thread(db, "o/r#1", idle_days=0)
    retention.note_closed(db, "issues", _closed_event(1))
    _closed_days_ago(db, "o/r#1", 3)  # closed 3 days ago, active since
    assert retention.plan(db, retention.Policy(30, 14, 1 << 40, closed_days=2), current().data_dir, NOW).threads == []


def test_the_webhook_intake_notes_a_closed_pull_request(db):
    _thread(db, "o/r#7", idle_days=0)
    event = sansio.Event({"action": "closed", "pull_request": {"number": 7}, "repository": {"full_name": "o/r"}},
                         event="pull_request", delivery_id="d-closed")
    response = asyncio.run(intake.accept(db, event, outsider_window_s=3600, handle="bot"))
    assert response.status_code == 202
    assert list(db.query("SELECT kind FROM notices WHERE conversation = 'o/r#7'")) == [{"kind": "closed"}]


def test_a_thread_the_bot_never_ran_in_is_not_noted(db):
    assert retention.note_closed(db, "issues", _closed_event(99))
    assert list(db.query("SELECT * FROM notices")) == []
