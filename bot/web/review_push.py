"""A push to a pull request the bot has reviewed (`pull_request.synchronize`, with `reviews.on_push`
in .github/bot.yml, checked by the worker's gate) queues one incremental review, coalesced: while
a review queued by an earlier push of the same person waits unclaimed (behind a running job of the
thread, say), the next push updates that job instead of queueing a second, so quick pushes give one
review, of the head the worker fetches when it claims the job: the last one.

    job_id = coalesced(conn, delivery_id=…, event=…, action=…, kind="episode", conversation=…, spec=…)

Same arguments as bot/service/store.py:enqueue_delivery, run in the same group commit. A pull
request the bot never reviewed queues nothing (None), nor does a push already seen (its delivery
id or its trigger key, whether it queued the job or was merged into one: `merged_pushes`).

The job keeps the authority of whoever asked for it: a push merges only into the waiting review of
the same requester (`jobs.coalesce_key`), and the merge changes which head it names, never who
asked, so the gate judges each job by its own requester. The database holds at most one waiting
review per key (a partial unique index, migration 8): two replicas merging pushes at one instant
insert once, and the loser's insert does nothing and merges instead. The merge itself is a
compare-and-set on the job's spec, so two merges at one instant both count.
"""
from __future__ import annotations

import time
from typing import Any

import orjson

from bot.db import Database
from bot.errors import BotError
from bot.review import memory
from bot.service import store

KIND = "synchronize"
ATTEMPTS = 8  # merge or insert, each losing only to another replica's write that committed meanwhile


class CoalescingRace(BotError, RuntimeError):
    """Other replicas kept winning; the delivery is not stored (503: GitHub may redeliver it)."""


def coalesced(conn: Database, *, delivery_id: str, event: str, action: str | None, kind: str,
              conversation: str, spec: dict[str, Any], notice: str | None = None) -> int | None:
    if not memory.reviewed(conn, str(spec.get("repo")), int(spec.get("number") or 0)):
        return None
    key = coalesce_key(conversation, str(spec.get("author") or ""))
    trigger = spec.get("trigger_key")
    for _ in range(ATTEMPTS):
        if _seen(conn, delivery_id, trigger):
            return None
        merged = _merge(conn, key, spec, event, action)
        if merged is not None:
            _record(conn, delivery_id, trigger, merged)
            return merged
        inserted = store.enqueue_delivery(conn, delivery_id=delivery_id, event=event, action=action, kind=kind,
                                          conversation=conversation, spec=spec, notice=notice, coalesce_key=key)
        if inserted is not None:
            return inserted
    raise CoalescingRace(f"push {delivery_id}: no merge or insert won in {ATTEMPTS} attempts")


def coalesce_key(conversation: str, requester: str) -> str:
    return f"{KIND}:{conversation}:{requester.lower()}"


def _seen(conn: Database, delivery_id: str, trigger: object) -> bool:
    """The push queued a live job, or was merged into one (a failed job's pushes may come again).
    The jobs' two lookups are apart, not one OR: SQLite reads an OR term through a full index only,
    never a partial one (by trigger, and by delivery id for jobs without one), and would scan the table."""
    return bool(conn.query(
        "SELECT 1 FROM jobs WHERE delivery_id = ? AND trigger_key IS NULL AND status != 'failed' "
        "UNION ALL SELECT 1 FROM jobs WHERE trigger_key = ? AND status != 'failed' "
        "UNION ALL SELECT 1 FROM merged_pushes m JOIN jobs j ON j.id = m.job_id "
        "WHERE (m.delivery_id = ? OR m.trigger_key = ?) AND j.status != 'failed' LIMIT 1",
        [delivery_id, trigger, delivery_id, trigger]))


def _merge(conn: Database, key: str, spec: dict[str, Any], event: str, action: str | None) -> int | None:
    """The waiting review of `key`, now naming this push's head; None when there is none or it
    changed (claimed, stopped, merged by another replica) between the read and the write."""
    row = conn.execute("SELECT id, spec FROM jobs WHERE coalesce_key = ? AND status = 'queued' "
                       "AND started_at IS NULL AND cancel_requested = 0", [key]).fetchone()
    if row is None:
        return None
    earlier = orjson.loads(row["spec"])
    changed = conn.execute(
        "UPDATE jobs SET spec = ? WHERE id = ? AND spec = ? AND status = 'queued' AND started_at IS NULL "
        "AND cancel_requested = 0", [orjson.dumps(_merged(earlier, spec, event, action)).decode(), row["id"],
                                     row["spec"]]).rowcount
    return int(row["id"]) if changed else None


def _merged(earlier: dict[str, Any], spec: dict[str, Any], event: str, action: str | None) -> dict[str, Any]:
    """The waiting job's spec, with the head of the push and one more push counted; who asked, and
    the trigger the row was queued for, stay the earlier push's."""
    automatic = {**(earlier.get("automatic") or {}), "detail": (spec.get("automatic") or {}).get("detail", "")}
    return {**earlier, "automatic": automatic, "event": event, "action": action,
            "coalesced": int(earlier.get("coalesced") or 1) + 1}


def _record(conn: Database, delivery_id: str, trigger: object, job_id: int) -> None:
    conn.execute("INSERT INTO merged_pushes (delivery_id, trigger_key, job_id, created_at) VALUES (?, ?, ?, ?) "
                 "ON CONFLICT (delivery_id) DO UPDATE SET trigger_key = excluded.trigger_key, "
                 "job_id = excluded.job_id, created_at = excluded.created_at",
                 [delivery_id, trigger, job_id, time.time()])
