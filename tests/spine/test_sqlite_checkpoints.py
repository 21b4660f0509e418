"""The service's SQLite checkpoints run on a thread of their own (bot/service/checkpoint.py): the event
loop's commits (the intake's 202s) never copy the log back, and what they committed is durable all
the same."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from bot.service import store
from bot.service.checkpoint import Checkpoints

ROOT = Path(__file__).resolve().parents[2]
PAGES = 3000  # three times the log length at which a connection checkpoints by default
ROW = b"x" * 3500  # about a page each


def _write_pages(db, pages: int) -> None:
    db.execute("CREATE TABLE IF NOT EXISTS filler (body BLOB)")
    for _ in range(pages // 10):
        db.execute("BEGIN IMMEDIATE")
        for _ in range(10):
            db.execute("INSERT INTO filler (body) VALUES (?)", [ROW])
        db.execute("COMMIT")


def test_the_loops_connection_commits_without_copying_the_log_back(tmp_path):
    db = store.connect(tmp_path / "bot.db")
    checkpoints = Checkpoints.of(db, interval_s=3600)  # its thread checkpoints only when stopped
    assert checkpoints is not None
    before = (tmp_path / "bot.db").stat().st_size
    try:
        _write_pages(db, PAGES)
        assert (tmp_path / "bot.db").stat().st_size == before  # every commit stayed in the log
        assert (tmp_path / "bot.db-wal").stat().st_size > PAGES * 4096
    finally:
        checkpoints.stop()
        db.close()


def test_the_thread_copies_the_log_back_into_the_database(tmp_path):
    db = store.connect(tmp_path / "bot.db")
    checkpoints = Checkpoints.of(db, interval_s=3600)
    assert checkpoints is not None
    try:
        _write_pages(db, PAGES)
        checkpoints.stop()  # one last checkpoint, on its thread
        assert (tmp_path / "bot.db").stat().st_size > PAGES * 3500
    finally:
        db.close()


def test_a_connection_without_checkpoints_commits_as_before(tmp_path):
    """Only the connection handed over stops checkpointing: another one (a job's, the record
    writer's) still copies the log back when it grows."""
    db = store.connect(tmp_path / "bot.db")
    checkpoints = Checkpoints.of(db, interval_s=3600)
    other = store.connect(tmp_path / "bot.db")
    try:
        _write_pages(other, PAGES)
        assert (tmp_path / "bot.db").stat().st_size > 1000 * 3500
    finally:
        assert checkpoints is not None
        checkpoints.stop()
        other.close()
        db.close()


CHILD = r"""
import sys
from pathlib import Path
from bot.service import store
from bot.service.checkpoint import Checkpoints
db = store.connect(Path(sys.argv[1]))
Checkpoints.of(db, interval_s=3600)
db.execute("CREATE TABLE acked (n INTEGER)")
for n in range(int(sys.argv[2])):
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO acked (n) VALUES (?)", [n])
    db.execute("COMMIT")
    print(n, flush=True)  # the "202": said only after the COMMIT returned
sys.stdin.read()
"""


def test_every_commit_the_process_answered_for_survives_its_kill_before_any_checkpoint(tmp_path):
    """Durable here means against the process's death (kill -9, a crash), at any instant: a commit
    is in the log before the answer, whether or not it was copied back."""
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "bot.db"), "200"], cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)), stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    answered = [int(child.stdout.readline()) for _ in range(200)]
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    db = store.connect(tmp_path / "bot.db")
    try:
        assert [row["n"] for row in db.query("SELECT n FROM acked ORDER BY n")] == answered
    finally:
        db.close()
