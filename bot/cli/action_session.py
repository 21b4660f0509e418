"""The Action's session cache: one per thread, holding only what the next turn needs to resume.

A workflow run starts from an empty data dir. What the next comment in the same thread needs is
the thread's CLI homes, reduced to each CLI's session state (bot/episode/resume_state.py), the
thread's rows of the session map, and its model spend so far (a thread budget and `@bot status`
count every turn); nothing else (no mirror, no database, no key, no other thread).
`export` writes exactly that to the session folder, which action.yml saves under a key of the
thread and the run, deleting the entry it restored, so each thread has one entry, replaced each
turn. `restore` brings it back into the fresh data dir; the cache is written by workflow runs of
the repository (a fork's included), so it is read as an allowlist (bot/cli/action_cache_entry.py):
regular files of bounded size, each value of its declared type and range, only this thread's
part; spend is merged add-only into the ledger. An entry that cannot be read is discarded.

A scheduled run keeps several threads in one entry (one per cron line: each automation on it runs
in its own issue): `threads_folder` makes the entry's folder a real one, each thread's part is a
subfolder named by its issue number, restored and exported as above (so each is checked as its own
thread's), and `keep_only` removes every other name from the entry before it is saved.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import stat
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bot.cli import action_cache_entry as cache_entry
from bot.db import Database
from bot.episode.resume_state import empty, scrub_homes
from bot.job import conversations

SESSIONS_FILE = cache_entry.SESSIONS_FILE
_FIELDS = ("agent", "session_id", "created_at", "last_used_at", "turns")
_SPEND = ("run_id", "ts", "requester", "installation", "tokens", "usd")
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
log = logging.getLogger("bot.cli.action_session")


def export(db: Database, key: str, folder: Path, data_dir: Path) -> int:
    """Replace `folder` with this thread's scrubbed CLI homes (from `data_dir`) and session rows;
    returns how many sessions it holds."""
    slug = conversations.slug(key)
    scrub_homes(data_dir / "homes")
    discard(folder)
    homes = data_dir / "homes" / slug
    if homes.is_dir():
        shutil.copytree(homes, folder / "homes" / slug, symlinks=True)
    rows = [{name: row[name] for name in _FIELDS} for row in db.query(
        "SELECT * FROM sessions WHERE conversation = ? AND session_id IS NOT NULL", [key])]
    spend = [{name: row[name] for name in _SPEND} for row in db.query(
        "SELECT * FROM model_spend WHERE conversation = ?", [key])] if "model_spend" in db.table_names() else []
    (folder / SESSIONS_FILE).write_text(json.dumps({"conversation": key, "sessions": rows, "spend": spend}))
    return len(rows)


@dataclass(frozen=True)
class Restored:
    """What a restore took: sessions and spend rows, what it dropped (recorded), and why the
    whole entry was discarded (None: it was not)."""

    sessions: int = 0
    spend: int = 0
    dropped: tuple[str, ...] = ()  # the first few, a line each
    dropped_count: int = 0
    discarded: str | None = None


def restore(db: Database, key: str, folder: Path, data_dir: Path, requester: str | None = None) -> Restored:
    """Take this thread's part of a restored session cache into `data_dir`. `requester` is this
    run's (its spend rows count toward their day; anyone else's toward the thread only). Never
    raises: an entry that cannot be read is discarded (the folder emptied, so the step saves a
    fresh one in its place) and the turn starts fresh."""
    try:
        return _restore(db, key, folder, data_dir, requester)
    except Exception as exc:  # noqa: BLE001 -- whatever the entry held, the command is still answered
        why = str(exc) if isinstance(exc, cache_entry.CacheEntryUnusable) else f"{type(exc).__name__} while restoring"
        log.warning("the session cache entry of %s is discarded: %s", key, why,
                    exc_info=not isinstance(exc, cache_entry.CacheEntryUnusable))
        shutil.rmtree(data_dir / "homes" / conversations.slug(key), ignore_errors=True)
        discard(folder)
        return Restored(discarded=why)


def discard(folder: Path) -> None:
    """Leave an empty real folder at `folder`, whatever was there (never following a link)."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISDIR(info.st_mode):
        folder.unlink()
    elif info is not None:
        empty(folder)
    folder.mkdir(parents=True, exist_ok=True)


def threads_folder(folder: Path) -> bool:
    """Make `folder` a real folder (created when absent) to hold one subfolder per thread; a link or
    a file found there is removed, never followed, so no thread's part is read or written through
    it. Returns whether something was removed."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        folder.mkdir(parents=True)
        return False
    if stat.S_ISDIR(info.st_mode):
        return False
    log.warning("the session cache entry %s is not a real folder: removed", folder)
    discard(folder)
    return True


def thread_part(folder: Path, number: int) -> Path:
    """Where thread `number`'s part of a several-thread entry lives (see `keep_only`)."""
    return folder / str(int(number))


def keep_only(folder: Path, numbers: set[int], any_part: bool = False) -> list[str]:
    """Remove from `folder` every name but the parts of `numbers` (whatever a cache brought: files,
    links, other threads' folders), never following a link; returns the names removed. `any_part`:
    keep every name a part could have (the run stopped before it knew all its threads). A name that
    cannot be removed is left and recorded: each thread's part is checked again on its restore."""
    kept, removed = {thread_part(folder, n).name for n in numbers}, list[str]()
    if any_part:
        kept |= {name for name in _names(folder) if name.isascii() and name.isdigit() and name == str(int(name))}
    try:
        fd = os.open(folder, _FOLDER)
    except OSError as exc:
        log.warning("the session cache entry %s was not pruned: %s", folder, exc.strerror)
        return removed
    try:
        for name in sorted(set(os.listdir(fd)) - kept):
            try:
                _remove_name(fd, folder, name)
                removed.append(name)
            except OSError as exc:
                log.warning("%s in the session cache entry was not removed: %s", name[:64], exc)
    finally:
        os.close(fd)
    return removed


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _remove_name(fd: int, folder: Path, name: str) -> None:
    if stat.S_ISDIR(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
        empty(folder / name)  # a real folder (just checked) under a real folder: emptied without following links
        os.rmdir(name, dir_fd=fd)
    else:
        os.unlink(name, dir_fd=fd)


def _restore(db: Database, key: str, folder: Path, data_dir: Path, requester: str | None) -> Restored:
    folder_fd = cache_entry.open_folder(folder)
    if folder_fd is None:
        return Restored()
    try:
        entry = cache_entry.read_entry(folder_fd, datetime.now(UTC))
        if entry is None or entry.conversation != key:
            return Restored()  # nothing cached, or another thread's: not ours to take or discard
        if entry.dropped.count:
            log.warning("%d values of the session cache entry of %s were dropped: %s", entry.dropped.count, key,
                        "; ".join(entry.dropped.lines))
        conversations.ensure(db, key)
        spend = _merge_spend(db, key, entry.spend, requester)  # a cache adds spend, even one discarded next
        cache_entry.take_home(folder_fd, folder, conversations.slug(key), data_dir / "homes" / conversations.slug(key))
    finally:
        os.close(folder_fd)
    sessions = _restore_sessions(db, key, entry.sessions)
    return Restored(sessions, spend, tuple(entry.dropped.lines), entry.dropped.count)


def _restore_sessions(db: Database, key: str, rows: list[cache_entry.SessionRow]) -> int:
    for row in rows:
        db.execute("INSERT INTO sessions (conversation, agent, session_id, created_at, last_used_at, turns) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (conversation, agent) DO NOTHING",
                   [key, row.agent, row.session_id, row.created_at, row.last_used_at, row.turns])
    return len(rows)


def _merge_spend(db: Database, key: str, rows: list[cache_entry.SpendRow], requester: str | None) -> int:
    """Merge the cached rows into the ledger as the larger of the two: a row (run, time, tokens,
    cost) is added as many times as the cache holds it beyond the ledger, and nothing the ledger
    holds is removed or lowered; a cache can add spend to the thread, never take any away.
    Another requester's row counts for the thread only."""
    held = Counter((row["run_id"], row["ts"], row["tokens"], row["usd"]) for row in db.query(
        "SELECT run_id, ts, tokens, usd FROM model_spend WHERE conversation = ?", [key]))
    added = 0
    for row in rows:
        identity = (row.run_id, row.ts, row.tokens, row.usd)
        if held[identity] > 0:
            held[identity] -= 1  # the ledger's own row stands for this one
            continue
        owner = row.requester if row.requester == requester else None
        db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, tokens, usd) "
                   "VALUES (?, ?, ?, ?, NULL, ?, ?)", [row.run_id, row.ts, key, owner, row.tokens, row.usd])
        added += 1
    return added
