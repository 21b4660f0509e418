"""Which `bot run` processes are alive, so that a run left "running" by one that is gone is
recorded as ended: stopped (Ctrl-C, by the process itself) or interrupted (killed, found by the
next `bot run` or `bot runs`).

Each `bot run` holds an exclusive lock on its own marker file in `<data dir>/local-runs/` while
it runs; the kernel drops the lock when the process dies, however it dies. A marker whose lock
can be taken belongs to a process that is gone: the runs of its thread it started and left
"running" are ended, with its request (redacted before it was written) recorded on them. A
later live `bot run` in the same repository keeps its own runs: only those started before it
are touched.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from adapters.base import Tier
from bot.record.recorder import Recorder, now_iso

FOLDER = "local-runs"


@dataclass
class Marker:
    path: Path
    conversation: str
    request: str
    started_at: str
    fd: int | None = None


@contextlib.contextmanager
def alive(data_dir: Path, conversation: str, request: str) -> Iterator[Marker]:
    """This process's marker, locked for as long as the block runs, removed after it."""
    folder = data_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    marker = Marker(folder / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.json", conversation, request, now_iso())
    writing = marker.path.with_suffix(".new")  # named *.json only once locked and whole
    marker.fd = os.open(writing, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(marker.fd, fcntl.LOCK_EX)
        os.write(marker.fd, json.dumps({"conversation": conversation, "request": request,
                                        "started_at": marker.started_at}).encode())
        os.rename(writing, marker.path)
        yield marker
    finally:
        marker.path.unlink(missing_ok=True)
        writing.unlink(missing_ok=True)
        os.close(marker.fd)


def end_own(recorder: Recorder, data_dir: Path, marker: Marker, status: str) -> list[str]:
    """This process's runs still "running" (it was stopped): ended with `status`."""
    return _end(recorder, marker, status, _later_starts(data_dir, marker))


def sweep(recorder: Recorder, data_dir: Path) -> list[str]:
    """The runs of every `bot run` that is gone, left "running": ended as interrupted."""
    ended: list[str] = []
    folder = data_dir / FOLDER
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        with _taken(path) as (gone, marker):
            if marker is not None:
                ended += _end(recorder, marker, "interrupted", _later_starts(data_dir, marker))
            if gone:
                path.unlink(missing_ok=True)
    return ended


def _end(recorder: Recorder, marker: Marker, status: str, later: list[str]) -> list[str]:
    until = min(later, default=None)
    ids = recorder.unfinished_runs(marker.conversation, since=marker.started_at, until=until)
    for run_id in ids:
        if not any(event["kind"] == "request" for event in recorder.events(run_id)):
            recorder.record(run_id, Tier.ENFORCED, "request", raw=marker.request)
        recorder.finish_run(run_id, status, {"error": f"the run was {status} before it finished"})
    return ids


def _later_starts(data_dir: Path, marker: Marker) -> list[str]:
    """When the other markers of the same thread started, after this one (their runs are theirs)."""
    starts = []
    for path in (data_dir / FOLDER).glob("*.json"):
        other = _read(path)
        if path != marker.path and other and other.conversation == marker.conversation \
                and other.started_at > marker.started_at:
            starts.append(other.started_at)
    return starts


@contextlib.contextmanager
def _taken(path: Path) -> Iterator[tuple[bool, Marker | None]]:
    """Whether the marker's process is gone (its lock could be taken), and then the marker."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:  # removed meanwhile, or not a file this module wrote
        yield False, None
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False, None
            return
        yield True, _read(path)
    finally:
        os.close(fd)


def _read(path: Path) -> Marker | None:
    try:
        data = json.loads(path.read_text())
        return Marker(path, str(data["conversation"]), str(data["request"]), str(data["started_at"]))
    except (OSError, ValueError, KeyError, TypeError):  # not a marker this module wrote
        return None
