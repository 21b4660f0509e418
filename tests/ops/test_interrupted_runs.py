"""A run whose worker died (SIGKILL, lost lease) is recorded interrupted when its job is taken up
again, so `bot runs` no longer shows a live run that is not."""
from __future__ import annotations

import json

import pytest

from bot.cli import runs
from bot.record.recorder import Recorder
from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import configure_app, enqueue
from tests.spine.service import REPO, make_remote, seeded_github
from tests.spine.test_worker import drain, spec


@pytest.fixture
def gh(monkeypatch, tmp_path):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{make_remote(tmp_path)}")
    from bot.github import client as github
    github._permissions.clear()
    yield fake
    fake.stop()


def listed(capsys) -> dict[str, dict]:
    capsys.readouterr()
    assert runs.main(["list", "--json"]) == 0
    return {run["id"]: run for run in json.loads(capsys.readouterr().out)}


def killed_attempt(db, job_id: int) -> str:
    """The job's first attempt started a run, then its worker died: the row says running."""
    store.update_job(db, job_id, attempts=1)
    return Recorder(db).start_run(agent="codex", job_id=str(job_id), conversation=f"{REPO}#1")


async def test_a_run_of_a_killed_attempt_shows_interrupted_in_bot_runs_after_the_job_is_taken_up(gh, capsys):
    db = store.connect(settings=current())
    job_id = enqueue(db, "reply", f"{REPO}#1", spec("help"))
    run_id = killed_attempt(db, job_id)
    assert listed(capsys)[run_id]["status"] == "running"
    await drain(db, 1)
    run = listed(capsys)[run_id]
    assert run["status"] == "interrupted" and run["finished_at"]
    assert Recorder(db).run(run_id)["summary"] == {"error": "interrupted: the worker stopped before the run finished"}


async def test_the_runs_of_other_jobs_are_left_running(gh, capsys):
    db = store.connect(settings=current())
    job_id = enqueue(db, "reply", f"{REPO}#1", spec("help"))
    killed_attempt(db, job_id)
    other = Recorder(db).start_run(agent="codex", job_id=str(job_id + 100), conversation=f"{REPO}#2")
    await drain(db, 1)
    assert listed(capsys)[other]["status"] == "running"
