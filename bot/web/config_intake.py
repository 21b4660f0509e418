"""The webhook's side of reading `.github/bot.yml` again (bot/intake/config_event.py): a push to the
default branch that changed it, or the App installed on repositories, queues one job per
repository in one group commit; the worker reads the file (bot/automations/config_read.py).

    response = await queued(db, event, jobs)   # 202, with the job ids (none: a duplicate)

A delivery's jobs are keyed by its id and the repository, and a push's by its before and after
commits too (`trigger_key`), so a redelivery queues nothing new.
"""
from __future__ import annotations

import logging

from gidgethub import sansio
from starlette.responses import JSONResponse

from bot import metrics
from bot.db import Database
from bot.intake.config_event import ConfigJob, queue_key
from bot.service import store

log = logging.getLogger("bot.web.config_intake")


async def queued(db: Database, event: sansio.Event, jobs: list[ConfigJob]) -> JSONResponse:
    def enqueue(conn: Database) -> list[int] | None:
        ids = [store.enqueue_delivery(conn, delivery_id=event.delivery_id + job.delivery_suffix, event=event.event,
                                      action=event.data.get("action"), kind="episode",
                                      conversation=queue_key(job.spec.repo), spec=job.spec.to_dict())
               for job in jobs]
        return [job_id for job_id in ids if job_id is not None] or None
    ids = await store.commit(db, enqueue) or []
    log.info("delivery %s: %d job(s) to read .github/bot.yml queued (%s)", event.delivery_id, len(ids),
             ", ".join(job.spec.repo for job in jobs))
    metrics.DELIVERIES.labels("queued" if ids else "duplicate").inc()
    return JSONResponse({"ok": True, "queued": bool(ids), "jobs": ids, "kind": "config"}, status_code=202)
