"""One `Secrets` per job (bot/record/secrets.py), held by the recorder, the log masker and the
tracking comment: a value added after they were made is masked by each of them."""
from __future__ import annotations

import logging
import sqlite3

from hypothesis import given
from hypothesis import strategies as st

from bot.db import connect
from bot.record.recorder import Recorder
from bot.record.redact import LogRedactor, masked_in_logs
from bot.record.secrets import Secrets

LATE = "bridge-token-" + "q" * 32


def test_a_secret_added_after_the_recorder_was_made_is_masked_in_its_events(tmp_path):
    secrets = Secrets()
    recorder = Recorder(connect(path=tmp_path / "bot.db"), secrets=secrets)
    run_id = recorder.start_run(agent="codex")
    secrets.add(LATE)
    recorder.declare_gap(run_id, f"the CLI printed {LATE}")
    recorder.flush(run_id)
    with sqlite3.connect(tmp_path / "bot.db") as other:
        (raw,) = other.execute("SELECT raw FROM run_events WHERE run_id = ?", [run_id]).fetchone()
    assert LATE not in raw


def test_a_secret_the_recorder_is_given_reaches_the_jobs_secrets(tmp_path):
    secrets = Secrets()
    recorder = Recorder(connect(path=tmp_path / "bot.db"), secrets=secrets)
    recorder.add_secrets([LATE])  # the relay and the bridge add their tokens this way
    assert LATE in secrets
    assert LATE not in secrets.mask(f"x {LATE} y")


def test_a_secret_added_while_the_job_runs_is_masked_in_log_lines():
    secrets = Secrets()
    record = logging.LogRecord("bot", logging.INFO, __file__, 1, "token %s", (LATE,), None)
    with masked_in_logs(secrets):
        secrets.add(LATE)
        LogRedactor().filter(record)
    assert LATE not in record.getMessage()


@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=12))
def test_secrets_keep_each_nonempty_value_once_and_drop_the_empty(values):
    secrets = Secrets(values)
    kept = [v for v in values if v]
    assert sorted(set(kept)) == sorted(secrets)
    assert len(secrets) == len(set(kept))


class Holder:
    """A value that changes while the job runs (the thread's installation token, renewed)."""

    def __init__(self, value: str | None) -> None:
        self.value = value


def test_a_followed_value_is_masked_as_it_is_now():
    holder = Holder(None)
    secrets = Secrets()
    secrets.follow(lambda: holder.value)
    holder.value = LATE
    assert LATE in secrets and LATE not in secrets.mask(f"x {LATE} y") and LATE in secrets.snapshot()


def test_a_followed_value_stays_masked_after_it_changed():
    holder = Holder("ghs_" + "a" * 36)
    secrets = Secrets()
    secrets.follow(lambda: holder.value)
    first = holder.value
    assert first in secrets
    holder.value = "ghs_" + "b" * 36
    assert first not in secrets.mask(f"old {first}") and holder.value not in secrets.mask(f"new {holder.value}")


@given(st.lists(st.one_of(st.none(), st.text(max_size=12)), max_size=12))
def test_following_keeps_each_nonempty_value_seen_once(values):
    holder = Holder(None)
    secrets = Secrets()
    secrets.follow(lambda: holder.value)
    for value in values:
        holder.value = value
        list(secrets)
    kept = [v for v in values if v]
    assert sorted(set(kept)) == sorted(secrets)
