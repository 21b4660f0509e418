"""A job given up after its last attempt says so in the log (and in /metrics)."""
from __future__ import annotations

import logging

from bot import metrics
from bot.service import store
from bot.service.worker import MAX_ATTEMPTS
from tests.entry_settings import current
from tests.spine.helpers import enqueue
from tests.spine.test_worker import drain, gh, spec  # noqa: F401  (gh: the fixture)

REPO_THREAD = "Codertocat/Hello-World#1"


async def test_job_given_up_after_its_last_attempt_is_logged_as_such(gh, monkeypatch, caplog):  # noqa: F811
    """GitHub unreachable at the start of the last attempt: the job fails, and the log line says
    it was given up after its last attempt."""
    monkeypatch.setenv("BOT_LEASE_SECONDS", "1")
    gh.fail_next("POST", r"/app/installations/1/access_tokens$", 0, times=MAX_ATTEMPTS)
    before = metrics.REGISTRY.get_sample_value("bot_jobs_given_up_total", {"kind": "reply"}) or 0.0
    db = store.connect(settings=current())
    enqueue(db, "reply", REPO_THREAD, spec("help"))
    with caplog.at_level(logging.INFO, logger="bot.service.worker"):
        rows = await drain(db, 1)
    assert (rows[0]["status"], rows[0]["attempts"]) == ("failed", MAX_ATTEMPTS)
    given_up = [r for r in caplog.records if "given up after its last attempt" in r.getMessage()]
    assert len(given_up) == 1 and given_up[0].levelno == logging.ERROR
    assert metrics.REGISTRY.get_sample_value("bot_jobs_given_up_total", {"kind": "reply"}) == before + 1
