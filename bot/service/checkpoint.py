"""The service's SQLite checkpoints, off the event loop.

In WAL mode every commit appends to the write-ahead log, and the connection whose commit takes the
log past 1,000 pages copies the log back into the database and syncs both files (a checkpoint: a
thousand page copies and two fdatasync calls, milliseconds). On the service's connection that commit
is the intake's group commit, on the event loop: the 202s of that batch, and every request behind
them, waited for the copy. Measured: 33 checkpoints per 4,000 deliveries on the loop, each about
4 ms; and while another connection keeps the log busy (the run record's writer during a flood), a
checkpoint that cannot finish is tried again by every later commit, the loop's included.

So the loop's connection never checkpoints (`wal_autocheckpoint=0`), and a thread of this module,
on a connection of its own, asks for a passive checkpoint every INTERVAL_S: it copies what no reader
still needs and waits for no one. Durability does not change: a commit is in the log before the
202 whether or not it has been copied back (docs/service.md, "Durable").

    checkpoints = Checkpoints.of(db)   # None for PostgreSQL (its server does this)
    ...
    checkpoints.stop()
"""
from __future__ import annotations

import logging
import threading

from bot.db import SQLITE, Database, another

log = logging.getLogger("bot.service.checkpoint")
INTERVAL_S = 0.5  # the log grows by at most this long's commits before they are copied back


class Checkpoints:
    """A thread that checkpoints `db`'s SQLite file, for a connection that no longer does."""

    def __init__(self, db: Database, interval_s: float = INTERVAL_S):
        self._own = another(db)
        self._interval_s = interval_s
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sqlite checkpoints", daemon=True)

    @classmethod
    def of(cls, db: Database, interval_s: float = INTERVAL_S) -> Checkpoints | None:
        """Take the checkpoints off `db`'s connection (the event loop's) and start the thread that
        does them; None when `db` is not SQLite."""
        if db.dialect is not SQLITE:
            return None
        checkpoints = cls(db, interval_s)
        db.execute("PRAGMA wal_autocheckpoint=0")
        checkpoints._thread.start()
        return checkpoints

    def stop(self) -> None:
        """Stop the thread after one last checkpoint, and close its connection."""
        self._stopping.set()
        self._thread.join()

    def _run(self) -> None:
        try:
            while not self._stopping.wait(self._interval_s):
                self._checkpoint()
            self._checkpoint()
        finally:
            self._own.close()

    def _checkpoint(self) -> None:
        try:
            self._own.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except Exception:  # a failed checkpoint leaves the log longer, never a commit lost: try again later
            log.warning("the SQLite checkpoint failed; trying again in %.1f s", self._interval_s, exc_info=True)
