"""Retention: the data dir stays within its windows and its disk budget without an operator.

What goes, in this order (`plan` decides, `apply` acts; `bot gc --dry-run` prints the plan):

1. run events (the recorded transcript of each run) of runs that finished more than
   BOT_RETENTION_EVENTS_DAYS ago; the run row itself stays (who, agent, status, summary), so
   spend and history still add up. The bridge's scratch folders (`runs/<run id>`) of the same age.
2. the CLI homes (and attachments) of threads idle for BOT_RETENTION_HOME_DAYS, or closed (the
   issue or pull request, `note_closed`) for BOT_RETENTION_CLOSED_DAYS: the agent's own session
   transcripts live there. The thread's sessions are marked not resumable
   (`conversations.collected`), so its next turn starts fresh with a recap and the answer says
   why. A thread with a queued or running job is never touched.
3. when the data dir is still over BOT_DISK_BUDGET: spare worktrees, then mirrors, least recently
   used first (a mirror in use by a job is kept; bot.workspace.worktrees decides that under its
   lock). Mirrors and spares are caches: the next job clones or checks out again.
4. the records of refused `.github/bot.yml` commits (`automation_config_refusals`) older than
   REFUSALS_KEPT_DAYS, unless their job is still queued or running: each one is what keeps a
   redelivered push from being replied to twice, so it is kept as long as GitHub redelivers.

On a shared database (PostgreSQL, many machines) a CLI home also lives in the database
(bot.episode.session_home), so a machine's homes are copies. Whether a thread's session is collected
(its stored home deleted, the thread marked collected) is decided from the database alone: the
thread is past the idle or closed window, whichever machine sweeps, and only once (the deletion
and the marking are one transaction that does nothing when another machine did it first). A
machine drops its local copy (and its version marker, so a later turn here restores from the
database) when the thread is past the window, when the copy was not used here for the idle window
(the thread went on elsewhere), or for the disk budget (least recently used here first, after the
spare worktrees and before the mirrors); that never changes what another machine resumes.

The sweep runs every BOT_GC_INTERVAL seconds in the service (`Sweeper`) and on demand (`bot gc`).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.config import Settings
from bot.db import Database
from bot.episode import session_home
from bot.episode.resume_state import empty
from bot.job import conversations
from bot.service import store
from bot.service.periodic import Periodic
from bot.workspace import pool, worktrees

log = logging.getLogger("bot.service.retention")
DAY = 86_400.0
# GitHub redelivers a delivery up to 30 days after it occurred ("You can redeliver webhook deliveries
# that occurred in the past 30 days": docs.github.com, webhooks, redelivering webhooks);
# a record is written when the delivery's job runs, after that; 5 days more for a redelivered job
# that waits in the queue.
REFUSALS_KEPT_DAYS = 35.0


CLOSED = "closed"  # a notices row: the thread's issue or pull request was closed at created_at


@dataclass(frozen=True)
class Policy:
    events_days: float
    home_days: float
    budget_bytes: int
    closed_days: float = 2.0

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        return cls(settings.number("BOT_RETENTION_EVENTS_DAYS"), settings.number("BOT_RETENTION_HOME_DAYS"),
                   settings.whole("BOT_DISK_BUDGET"), settings.number("BOT_RETENTION_CLOSED_DAYS"))


@dataclass
class Plan:
    """What one sweep of `data_dir` removes; every list is what a dry run prints."""
    data_dir: Path
    runs: list[str] = field(default_factory=list)  # run ids whose events go
    scratch: list[Path] = field(default_factory=list)  # runs/<id> folders
    threads: list[str] = field(default_factory=list)  # conversation keys whose homes go
    local_homes: list[str] = field(default_factory=list)  # shared database: only this machine's copy goes
    spares: list[Path] = field(default_factory=list)
    mirrors_over_bytes: int = 0  # how much the mirrors must shrink after the spares went
    disk_bytes: int = 0
    refusals_before: float = 0.0  # records of refused config commits written before this go
    refusals: int = 0  # how many there were when the plan was made

    def lines(self) -> list[str]:
        out = [f"run events of {len(self.runs)} run(s) past the window"]
        out += [f"  run {run_id}" for run_id in self.runs]
        out += [f"scratch folder {path.name}" for path in self.scratch]
        out += [f"CLI home of {key} (idle past the window; next turn starts fresh)" for key in self.threads]
        out += [f"local copy of the CLI home of {key} (the stored one stays; resumed from it)"
                for key in self.local_homes]
        out += [f"spare worktree {path.parent.parent.name}/{path.parent.name}/{path.name}" for path in self.spares]
        if self.mirrors_over_bytes > 0:
            out.append(f"mirrors, least recently used first, until {self.mirrors_over_bytes} bytes are freed")
        if self.refusals:
            out.append(f"{self.refusals} record(s) of refused config commits past GitHub's redelivery window")
        return out


@dataclass
class Swept:
    events: int = 0
    runs: int = 0
    threads: int = 0
    local_homes: int = 0
    spares: int = 0
    mirrors: list[str] = field(default_factory=list)
    refusals: int = 0


def plan(db: Database, policy: Policy, data_dir: Path, now: float | None = None) -> Plan:
    now = time.time() if now is None else now
    root = data_dir
    result = Plan(root, disk_bytes=tree_bytes(root))
    result.runs = _old_runs(db, now - policy.events_days * DAY)
    result.scratch = _old_folders(root / "runs", now - policy.events_days * DAY)
    idle_before, closed_before = now - policy.home_days * DAY, now - policy.closed_days * DAY
    expired = _expired_threads(db, idle_before, closed_before)
    copies: list[tuple[str, float]] = []
    if db.shared:
        result.threads = [key for key in expired if _collectable(db, key)]
        copies = _local_copies_by_use(db, root, exclude=set(result.threads))
        result.local_homes = [key for key, used in copies if key in expired or used < idle_before]
    else:
        homes = root / "homes"
        result.threads = [key for key in expired if (homes / conversations.slug(key)).is_dir()]
    over = result.disk_bytes - policy.budget_bytes - _bytes_freed(root, result)
    for spare in _spares_by_age(root):
        if over <= 0:
            break
        result.spares.append(spare)
        over -= tree_bytes(spare)
    for key, _ in copies:
        if over <= 0:
            break
        if key not in result.local_homes:
            result.local_homes.append(key)
            over -= tree_bytes(root / "homes" / conversations.slug(key))
    result.mirrors_over_bytes = max(over, 0)
    result.refusals_before = now - REFUSALS_KEPT_DAYS * DAY
    result.refusals = int(db.query(f"SELECT COUNT(*) AS n {_OLD_REFUSALS}", [result.refusals_before])[0]["n"])
    return result


async def apply(db: Database, planned: Plan) -> Swept:
    swept = Swept()
    for run_id in planned.runs:
        swept.events += db.execute("DELETE FROM run_events WHERE run_id = ?", [run_id]).rowcount
        swept.runs += 1
    for folder in planned.scratch:
        shutil.rmtree(folder, ignore_errors=True)
    for key in planned.threads:
        if _busy(db, key):  # a job arrived since the plan was made
            continue
        swept.threads += collect_home(db, key, planned.data_dir)
    for key in planned.local_homes:
        if not _busy(db, key):
            session_home.drop_local(planned.data_dir, key)
            swept.local_homes += 1
    for spare in planned.spares:
        mirror = _mirror_of(planned.data_dir, spare)
        async with worktrees.mirror_lock(mirror):
            await pool.discard(mirror, spare)
        swept.spares += 1
    if planned.mirrors_over_bytes > 0:
        total = worktrees.mirrors_bytes(planned.data_dir)
        swept.mirrors = await worktrees.collect_garbage(planned.data_dir, max(total - planned.mirrors_over_bytes, 0))
    if planned.refusals:
        swept.refusals = db.execute(f"DELETE {_OLD_REFUSALS}", [planned.refusals_before]).rowcount
    return swept


async def sweep(db: Database, policy: Policy, data_dir: Path) -> Swept:
    swept = await apply(db, plan(db, policy, data_dir))
    log.info("retention: %d event(s) of %d run(s), %d CLI home(s), %d local copy(ies) of CLI homes, %d spare(s), "
             "%d mirror(s), %d config refusal record(s) removed", swept.events, swept.runs, swept.threads,
             swept.local_homes, swept.spares, len(swept.mirrors), swept.refusals)
    return swept


def note_closed(db: Database, event: str, payload: dict[str, Any]) -> bool:
    """An issue or pull request closed (or reopened): remember when, for the closed-thread window.
    Returns whether the event was one of those (the webhook intake then has nothing else to do)."""
    item = payload.get("issue") if event == "issues" else payload.get("pull_request") if event == "pull_request" \
        else None
    action, repo = payload.get("action"), (payload.get("repository") or {}).get("full_name")
    if not isinstance(item, dict) or action not in ("closed", "reopened") or not isinstance(repo, str):
        return False
    number = item.get("number")
    if not isinstance(number, int):
        return False
    key = conversations.thread_key(repo, number)
    if action == "reopened":
        db.execute("DELETE FROM notices WHERE conversation = ? AND kind = ?", [key, CLOSED])
    elif any(db.query("SELECT 1 FROM conversations WHERE key = ?", [key])):
        db.execute("INSERT INTO notices (conversation, kind, created_at) VALUES (?, ?, ?) ON CONFLICT "
                   "(conversation, kind) DO UPDATE SET created_at = excluded.created_at", [key, CLOSED, time.time()])
    return True


def collect_home(db: Database, key: str, data_dir: Path) -> bool:
    """Remove a thread's CLI homes and its attachments in `data_dir`; its sessions can no longer be
    resumed. False when another machine collected the thread first (shared database: nothing is
    marked)."""
    session_home.drop_local(data_dir, key)
    folder = data_dir / "attachments" / conversations.slug(key)
    if folder.is_dir() and not folder.is_symlink():
        empty(folder)  # written by the agent: never follow a link it planted
        folder.rmdir()
    if not db.shared:
        conversations.mark_collected(db, key)
        return True
    return bool(store.write(db, lambda conn: _collect_stored(conn, key)))


def _collect_stored(db: Database, key: str) -> bool | None:
    """Delete the stored homes and mark the thread collected, unless that is done already (the
    DELETE and UPDATE wait for a concurrent collection's transaction, then find nothing to do)."""
    deleted = db.execute("DELETE FROM session_homes WHERE conversation = ?", [key]).rowcount
    cleared = db.execute("UPDATE sessions SET session_id = NULL WHERE conversation = ? AND session_id IS NOT NULL",
                         [key]).rowcount
    if not deleted and not cleared:
        return None  # rolls back: nothing was written
    conversations.mark_collected(db, key)
    return True


def tree_bytes(path: Path) -> int:
    """Bytes on disk under `path` (allocated blocks, links not followed)."""
    total = 0
    for item in path.rglob("*") if path.is_dir() else ():
        with contextlib.suppress(OSError):
            total += item.lstat().st_blocks * 512
    return total


# a refusal whose job is still queued or running may yet be claimed "again" by that job
_OLD_REFUSALS = ("FROM automation_config_refusals WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM jobs j "
                 "WHERE j.id = automation_config_refusals.job_id AND j.status IN ('queued', 'running'))")


def _old_runs(db: Database, before: float) -> list[str]:
    cutoff = _iso(before)
    return [row["id"] for row in db.query(
        "SELECT r.id FROM runs r WHERE r.status != 'running' AND COALESCE(r.finished_at, r.started_at) < ? "
        "AND EXISTS (SELECT 1 FROM run_events e WHERE e.run_id = r.id) ORDER BY r.started_at", [cutoff])] \
        if "runs" in db.table_names() else []


def _old_folders(root: Path, before: float) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.lstat().st_mtime < before)


def _expired_threads(db: Database, idle_before: float, closed_before: float) -> list[str]:
    """Threads past the idle or closed window, by the database, without a queued or running job."""
    rows = db.query("SELECT key FROM conversations c WHERE last_active_at < ? OR EXISTS (SELECT 1 FROM notices n "
                    "WHERE n.conversation = c.key AND n.kind = ? AND n.created_at < ? AND n.created_at >= "
                    "c.last_active_at) ORDER BY last_active_at", [idle_before, CLOSED, closed_before])
    return [row["key"] for row in rows if not _busy(db, row["key"])]


def _collectable(db: Database, key: str) -> bool:
    """Shared database: the thread still has a stored home or a resumable session to collect."""
    return any(db.query("SELECT 1 FROM session_homes WHERE conversation = ? LIMIT 1", [key])) \
        or _resumable(db, key)


def _resumable(db: Database, key: str) -> bool:
    return any(db.query("SELECT 1 FROM sessions WHERE conversation = ? AND session_id IS NOT NULL LIMIT 1",
                        [key]))


def _local_copies_by_use(db: Database, root: Path, exclude: set[str]) -> list[tuple[str, float]]:
    """This machine's copies of CLI homes (shared database), least recently used here first: when
    it last saved or restored them, else the thread's last activity. Threads with a queued or
    running job are left out."""
    homes = root / "homes"
    present = {p.name for p in homes.iterdir() if p.is_dir() and not p.is_symlink()} if homes.is_dir() else set()
    copies: list[tuple[str, float]] = []
    for row in db.query("SELECT key, last_active_at FROM conversations") if present else ():
        key = row["key"]
        if conversations.slug(key) in present and key not in exclude and not _busy(db, key):
            used = session_home.used_here_at(root, key)
            copies.append((key, (row["last_active_at"] or 0.0) if used is None else used))
    return sorted(copies, key=lambda copy: copy[1])


def _busy(db: Database, key: str) -> bool:
    return any(db.query("SELECT 1 FROM jobs WHERE conversation = ? AND status IN ('queued', 'running') "
                        "LIMIT 1", [key]))


def _bytes_freed(root: Path, planned: Plan) -> int:
    homes = [root / "homes" / conversations.slug(key) for key in [*planned.threads, *planned.local_homes]]
    return sum(tree_bytes(path) for path in [*planned.scratch, *homes])


def _spares_by_age(root: Path) -> list[Path]:
    spare_root = root / "worktrees" / pool.SPARE_DIR
    found = [p for p in spare_root.glob("*/*/*") if p.is_dir() and not p.is_symlink()]
    return sorted(found, key=lambda p: p.lstat().st_mtime)


def _mirror_of(data_dir: Path, spare: Path) -> Path:
    """worktrees/.spare/<owner>/<repo.git>/<slot> → mirrors/<owner>/<repo.git>."""
    return data_dir / "mirrors" / spare.parent.parent.name / spare.parent.name


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")


class Sweeper(Periodic):
    """The service's periodic sweep, every BOT_GC_INTERVAL seconds (the first one interval after
    start, so a restart loop does not turn into a sweep loop). A sweep walks the data dir, so it
    runs on a thread with a connection of its own and never stalls the service's event loop; the
    mirror locks it takes are flocks, which the workers' locks exclude across threads too.
    `connect` opens that connection (the service's database)."""

    def __init__(self, interval_s: float, policy: Policy, data_dir: Path, connect: Callable[[], Database]):
        super().__init__(interval_s)
        self.policy, self.data_dir, self._connect = policy, data_dir, connect

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await asyncio.to_thread(self._sweep_on_this_thread)
            except Exception:  # a failed sweep must not stop the next one
                log.exception("retention sweep failed")


    def _sweep_on_this_thread(self) -> Swept:
        db = self._connect()
        try:
            return asyncio.run(sweep(db, self.policy, self.data_dir))
        finally:
            db.close()
