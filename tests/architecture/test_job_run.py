"""One job holds one recorder and one set of secrets (bot/job/run.py), and the worker reaches a
running job only through its signal: it never writes into the job's context."""
from __future__ import annotations

import asyncio
import re
from pathlib import Path

from bot.job.context import Job
from bot.job.run import JobSignal, end_because, stopped_by

ROOT = Path(__file__).resolve().parents[2]
RECORDER = re.compile(r"\bRecorder\(")


def test_the_job_builds_its_recorder_in_one_place():
    built = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bot" / "job").rglob("*.py")
                   if RECORDER.search(p.read_text()))
    assert built == ["bot/job/run.py"]


def test_the_job_context_holds_no_field_the_worker_writes_while_it_runs():
    assert {"stopped_by", "ended_because"} & set(Job.__annotations__) == set()


def test_a_stop_through_the_signal_names_who_asked():
    signal = JobSignal()
    signal.stop("alice")
    assert signal.is_set() and stopped_by(signal) == "alice"


def test_a_second_stop_keeps_the_first_stoppers_name():
    signal = JobSignal()
    signal.stop("alice")
    signal.stop(None)  # the service shutting down after alice's stop
    assert stopped_by(signal) == "alice"


def test_a_plain_event_names_nobody_and_hears_nothing():
    event = asyncio.Event()
    end_because(event, "no credentials")
    event.set()
    assert stopped_by(event) is None


def test_why_a_job_ended_early_reaches_its_worker_through_the_signal():
    signal = JobSignal()
    end_because(signal, "no credentials")
    assert signal.ended_because == "no credentials"


def test_the_episode_names_neither_the_jobs_context_nor_its_run():
    named = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bot" / "episode").rglob("*.py")
                   if re.search(r"\b(Job|JobRun|JobSignal)\b", p.read_text()))
    assert named == []
