"""A push to a pull request the bot has reviewed (`pull_request.synchronize`, with `reviews.on_push`
in .github/bot.yml, checked by the worker's gate) queues one incremental review, coalesced: while
a review queued by an earlier push waits unclaimed (behind a running job of the thread, say), the
next push updates that job instead of queueing a second, so quick pushes give one review, of the
head the worker fetches when it claims the job: the last one.

    job_id = coalesced(conn, delivery_id=…, event=…, action=…, kind="episode", conversation=…, spec=…)

Same arguments as bot/service/store.py:enqueue_delivery, run in the same group commit. A pull
request the bot never reviewed queues nothing (None).
"""
from __future__ import annotations

import json
from typing import Any

import orjson

from bot.db import Database
from bot.review import memory
from bot.service import store

KIND = "synchronize"


def coalesced(conn: Database, *, delivery_id: str, event: str, action: str | None, kind: str,
              conversation: str, spec: dict[str, Any], notice: str | None = None) -> int | None:
    if not memory.reviewed(conn, str(spec.get("repo")), int(spec.get("number") or 0)):
        return None
    waiting = _waiting(conn, conversation)
    if waiting is None:
        return store.enqueue_delivery(conn, delivery_id=delivery_id, event=event, action=action, kind=kind,
                                      conversation=conversation, spec=spec, notice=notice)
    job_id, earlier = waiting
    pushes = int(earlier.get("coalesced") or 1) + 1
    updated = {**earlier, **spec, "event": event, "action": action, "coalesced": pushes}
    changed = conn.execute("UPDATE jobs SET spec = ? WHERE id = ? AND status = 'queued' AND started_at IS NULL",
                           [orjson.dumps(updated).decode(), job_id]).rowcount
    if not changed:  # claimed this instant: this push gets its own review
        return store.enqueue_delivery(conn, delivery_id=delivery_id, event=event, action=action, kind=kind,
                                      conversation=conversation, spec=spec, notice=notice)
    return job_id


def _waiting(conn: Database, conversation: str) -> tuple[int, dict[str, Any]] | None:
    """The thread's push review that no worker has claimed yet, if any."""
    rows = conn.query("SELECT id, spec FROM jobs WHERE conversation = ? AND kind = 'episode' AND status = 'queued' "
                      "AND started_at IS NULL ORDER BY id", [conversation])
    for row in rows:
        spec = json.loads(row["spec"])
        if (spec.get("automatic") or {}).get("kind") == KIND:
            return row["id"], spec
    return None
