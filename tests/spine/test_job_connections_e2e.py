"""One job, one run, one recorder, one database connection: a whole job (`bot run`'s, with a repository's and a
requester's ids as a GitHub job has; real Codex in the sandbox, the fake provider behind it) is
counted while `pipeline.run` runs. The job makes its `JobRun` once,
builds one `Recorder` (the run's), and opens no connection of its own: its recorder, its credential lookups, its session map and its
session home all use the connection its entry point handed it.

The one connection opened meanwhile that is not the job's is the process's event writer
(bot/record/event_log.py): a thread per database per process, shared by every job, which needs a
connection of its own because a connection serves one thread; it is counted apart."""
from __future__ import annotations

import asyncio
import dataclasses
import threading
import traceback
from collections import Counter
from collections.abc import Iterator

import pytest

import bot.db
from bot.cli.render import Terminal
from bot.cli.run import context
from bot.config import Settings
from bot.job import pipeline
from bot.job.run import JobRun
from bot.record.recorder import Recorder
from bot.service import store
from tests.spine.local_cli import local_cli

pytestmark = pytest.mark.e2e
WRITER = "run events ("  # bot/record/event_log.py names its writer thread so


class Counted:
    """Connections opened and runs begun while a job runs, each with the bot function that asked."""

    def __init__(self) -> None:
        self.in_job = False
        self.connections: Counter[str] = Counter()  # opened by the job's own code
        self.writer = 0  # opened by the process's event writer thread
        self.runs = 0
        self.recorders = 0

    def connection(self) -> None:
        if not self.in_job:
            return
        if threading.current_thread().name.startswith(WRITER):
            self.writer += 1
        else:
            self.connections[_asker()] += 1


def _asker() -> str:
    frames = [f for f in traceback.extract_stack() if "/bot/" in f.filename and "/bot/db/" not in f.filename]
    return f"{frames[-1].filename.split('/bot/', 1)[1]}:{frames[-1].name}" if frames else "?"


def counting(monkeypatch: pytest.MonkeyPatch) -> Counted:
    counted = Counted()
    for name in ("_sqlite", "_postgresql", "reopen"):
        opener = getattr(bot.db, name)

        def wrapped(*args, _opener=opener, **kwargs):
            counted.connection()
            return _opener(*args, **kwargs)
        monkeypatch.setattr(bot.db, name, wrapped)
    run, begin, recorder = pipeline.run, JobRun.begin.__func__, Recorder.__init__

    async def job(*args, **kwargs):
        counted.in_job = True
        try:
            return await run(*args, **kwargs)
        finally:
            counted.in_job = False

    def begun(cls, *args, **kwargs):
        counted.runs += 1
        return begin(cls, *args, **kwargs)

    def built(self, *args, **kwargs):
        counted.recorders += counted.in_job
        recorder(self, *args, **kwargs)
    monkeypatch.setattr(Recorder, "__init__", built)
    monkeypatch.setattr(pipeline, "run", job)
    monkeypatch.setattr(JobRun, "begin", classmethod(begun))
    return counted


@pytest.fixture(scope="module")
def one_job(tmp_path_factory) -> Iterator[Counted]:
    with pytest.MonkeyPatch.context() as monkeypatch, local_cli(tmp_path_factory.mktemp("job")) as cli:
        counted = counting(monkeypatch)
        settings, term = Settings(cli.env), Terminal(live=False, as_json=True)
        # a repository's and a requester's ids, as a GitHub job has: its keys are looked up in the vault
        local = context("Say hello", cli.repo, "codex", False, term, settings)
        ctx = dataclasses.replace(local, spec=dataclasses.replace(local.spec, repo_id=9, author_id=7, installation_id=5))
        db = store.connect(settings=settings)
        try:
            assert asyncio.run(pipeline.run(db, ctx, asyncio.Event())) == "done"
        finally:
            db.close()
        yield counted


def test_a_job_begins_its_run_once(one_job):
    assert one_job.runs == 1


def test_a_job_builds_one_recorder(one_job):
    assert one_job.recorders == 1


def test_a_job_opens_no_database_connection_of_its_own(one_job):
    assert dict(one_job.connections) == {}


def test_the_process_event_writer_opens_at_most_one_connection_for_the_job(one_job):
    assert one_job.writer <= 1
