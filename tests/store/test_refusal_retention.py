"""Retention of the refused-config records (`automation_config_refusals`, migration 18), on both
backends: a record goes once GitHub can no longer redeliver its push, and not before, so the one
reply per commit holds across every redelivery."""
from __future__ import annotations

import asyncio
import time

from bot.automations.config_refusal import _claim
from bot.service import retention
from bot.workspace.repo_config import ConfigError
from tests.entry_settings import current, database

DAY = 86_400
NOW = time.time()
REPO = "octo/repo"
WINDOWS = retention.Policy(events_days=30, home_days=14, budget_bytes=1 << 40)
BAD = ConfigError("unknown key", key="colour", line=7)


def _refused(db, sha: str, days_ago: float, job_id: int = 8) -> None:
    """A commit refused (claimed by job `job_id`, its comment posted) `days_ago`."""
    assert _claim(db, REPO, sha, BAD, job_id) == "new"
    db.execute("UPDATE automation_config_refusals SET comment_id = 5, created_at = ? WHERE commit_sha = ?",
               [NOW - days_ago * DAY, sha])


def _job(db, status: str) -> int:
    db.execute("INSERT INTO jobs (kind, conversation, spec, status, created_at) VALUES ('config', ?, '{}', ?, ?)",
               [f"{REPO}#0", status, NOW])
    return int(db.query("SELECT MAX(id) AS id FROM jobs")[0]["id"])


def _kept(db) -> list[str]:
    return sorted(row["commit_sha"] for row in db.query("SELECT commit_sha FROM automation_config_refusals"))


def _sweep(db) -> retention.Swept:
    return asyncio.run(retention.apply(db, retention.plan(db, WINDOWS, current().data_dir, NOW)))


def test_a_refusal_past_the_redelivery_window_is_removed_and_a_recent_one_stays(backend):
    db = database()
    _refused(db, "a" * 40, days_ago=retention.REFUSALS_KEPT_DAYS + 1)
    _refused(db, "b" * 40, days_ago=1)
    assert _sweep(db).refusals == 1
    assert _kept(db) == ["b" * 40]


def test_every_refusal_github_may_still_redeliver_is_kept(backend):
    """GitHub redelivers a delivery for 30 days (its docs, "Redelivering webhooks"): a record of
    day 30 still holds the reply to once."""
    db = database()
    _refused(db, "a" * 40, days_ago=30)
    assert retention.REFUSALS_KEPT_DAYS >= 30 and _sweep(db).refusals == 0
    assert _claim(db, REPO, "a" * 40, BAD, job_id=9) is None  # a redelivery's job: replied to already


def test_an_old_refusal_whose_job_is_still_queued_is_kept(backend):
    db = database()
    job = _job(db, "queued")
    _refused(db, "a" * 40, days_ago=retention.REFUSALS_KEPT_DAYS + 1, job_id=job)
    assert _sweep(db).refusals == 0 and _kept(db) == ["a" * 40]


def test_the_dry_run_plan_names_the_refusals_it_would_remove(backend):
    db = database()
    _refused(db, "a" * 40, days_ago=retention.REFUSALS_KEPT_DAYS + 1)
    planned = retention.plan(db, WINDOWS, current().data_dir, NOW)
    assert "1 record(s) of refused config commits past GitHub's redelivery window" in planned.lines()
    assert _kept(db) == ["a" * 40]
