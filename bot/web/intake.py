"""`POST /webhook`: verify, parse, decide, enqueue, answer 202. No GitHub call, no agent work.

Refusals: bad or missing signature 401; malformed JSON or missing headers 400; body over
25 MB 413 (refused before reading it all); events we do not act on 202 with nothing stored.
Every refusal is logged with the delivery id, never the body.
"""
from __future__ import annotations

import http
import logging
from typing import Any
from urllib.parse import parse_qs

import orjson
from gidgethub import BadRequest, ValidationFailure, sansio
from starlette.requests import Request
from starlette.responses import JSONResponse

from bot import config, metrics
from bot.db import Database
from bot.job import grammar
from bot.job.conversations import thread_key
from bot.permissions import association_may_trigger, is_bot_author
from bot.service import reply_cap, retention, store
from bot.web import triggers

log = logging.getLogger("bot.web.intake")
MAX_BODY_BYTES = 25 * 1024 * 1024
_REQUIRED_HEADERS = ("x-github-event", "x-github-delivery")
_READ_HEADERS = frozenset({b"x-github-event", b"x-github-delivery", b"x-hub-signature-256",
                           b"content-type", b"content-length"})


class _JSON(JSONResponse):
    """Starlette's JSONResponse (same compact UTF-8 bytes), rendered by orjson."""

    def render(self, content: object) -> bytes:
        return orjson.dumps(content)


async def webhook(request: Request) -> JSONResponse:
    # one pass over the raw ASGI headers (already lower-case), decoding only the five we read
    headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.scope["headers"] if k in _READ_HEADERS}
    delivery = headers.get("x-github-delivery", "-")
    missing = getattr(request.app.state, "missing_config", [])
    if missing:
        return _refuse(503, delivery, "GitHub App not configured: " + " ".join(missing))
    body = await _read_capped(request, headers)
    if body is None:
        return _refuse(413, delivery, f"body over {MAX_BODY_BYTES} bytes")
    try:
        event = _verified_event(headers, body)
    except ValidationFailure as exc:
        return _refuse(401, delivery, f"signature rejected: {exc}")
    except (BadRequest, KeyError, ValueError, orjson.JSONDecodeError) as exc:
        return _refuse(400, delivery, f"malformed delivery: {type(exc).__name__}")
    if event.event == "ping":
        metrics.DELIVERIES.labels("ping").inc()
        return _JSON({"ok": True, "pong": True})
    try:
        response = await decide(request.app.state.db, event)
    except Exception as exc:  # nothing stored (a full disk, a lost database): GitHub may redeliver
        log.exception("delivery %s could not be stored", delivery)
        return _refuse(503, delivery, f"could not store the delivery ({type(exc).__name__}); try again later")
    pool = getattr(request.app.state, "pool", None)
    if pool is not None and response.status_code == 202:
        pool.wake()
    return response


def _verified_event(headers: dict[str, str], body: bytes) -> sansio.Event:
    """HMAC over the raw bytes first (gidgethub's constant-time check), then headers and JSON."""
    signature = headers.get("x-hub-signature-256")
    if not signature:
        raise ValidationFailure("signature is missing")
    if not signature.startswith("sha256="):  # gidgethub would also verify a `sha1=` value
        raise ValidationFailure("X-Hub-Signature-256 must hold a sha256= value")
    sansio.validate_event(body, signature=signature, secret=config.webhook_secret())
    for name in _REQUIRED_HEADERS:
        if not headers.get(name):
            raise KeyError(name)
    content_type = headers.get("content-type", "application/json").split(";")[0].strip()
    if content_type == "application/x-www-form-urlencoded":
        data = orjson.loads(parse_qs(body.decode())["payload"][0])
    elif content_type == "application/json":
        data = orjson.loads(body)
    else:
        raise BadRequest(http.HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
    if not isinstance(data, dict):
        raise ValueError("payload is not a JSON object")
    return sansio.Event(data, event=headers["x-github-event"], delivery_id=headers["x-github-delivery"])


async def _read_capped(request: Request, headers: dict[str, str]) -> bytes | None:
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _refuse(status: int, delivery: str, reason: str) -> JSONResponse:
    log.warning("webhook refused: status=%s delivery=%s reason=%s", status, delivery, reason)
    metrics.DELIVERIES.labels(f"refused_{status}").inc()
    return _JSON({"ok": False, "reason": reason}, status_code=status)


def _ignored(delivery: str, reason: str) -> JSONResponse:
    log.info("webhook ignored: delivery=%s reason=%s", delivery, reason)
    metrics.DELIVERIES.labels("ignored").inc()
    return _JSON({"ok": True, "queued": False, "reason": reason}, status_code=202)


async def decide(db: Database, event: sansio.Event) -> JSONResponse:
    """Turn a verified event into at most one job."""
    if found := triggers.automatic(event.event, event.data):  # a label, an assignment, … (issue 14)
        job = await triggers.enqueue(db, event.delivery_id, event.event, event.data.get("action"), found)
        metrics.DELIVERIES.labels("queued" if job is not None else "duplicate").inc()
        return _JSON({"ok": True, "queued": job is not None, "job": job, "kind": "episode"}, status_code=202)
    if retention.note_closed(db, event.event, event.data):  # when a thread's CLI homes may go
        return _ignored(event.delivery_id, f"{event.event}.{event.data.get('action')} noted for retention")
    trigger = extract_trigger(event.event, event.data)
    if trigger is None:
        return _ignored(event.delivery_id, f"{event.event}.{event.data.get('action')} is not acted on")
    if is_bot_author(trigger["author"], trigger["author_type"]):
        return _ignored(event.delivery_id, "author is a bot")
    if not trigger["installation_id"]:
        return _ignored(event.delivery_id, "not delivered to an installed GitHub App")
    command = grammar.parse(trigger.pop("body"), config.handle(), config.AGENTS)
    if command is None:
        return _ignored(event.delivery_id, "no command for us")
    return await _enqueue(db, event, trigger, command)


async def _enqueue(db: Database, event: sansio.Event, trigger: dict, command: grammar.Command) -> JSONResponse:
    conversation = thread_key(trigger["repo"], trigger["number"])
    spec = {**trigger, "event": event.event, "delivery": event.delivery_id,
            "command": {"kind": command.kind, "agent": command.agent, "new_session": command.new_session,
                        "request": command.request, "unknown_name": command.unknown_name,
                        "review": command.review, "agents": list(command.agents)}}
    notice = None
    if command.kind in ("run", "stop") and not association_may_trigger(trigger["association"]):
        kind, spec["reply"], notice = "reply", "not_allowed", "not_allowed"
    elif command.kind == "run":
        kind = "episode"
    else:
        kind, spec["reply"] = "reply", command.kind
        if command.kind == "stop":
            spec["stopped_job"] = await store.commit(db, lambda conn: _request_stop(conn, conversation))
    # group commit: one COMMIT for the deliveries of this loop iteration; 202 only after it
    job_id = await store.commit(db, reply_cap.capped(spec, conversation, lambda conn: store.enqueue_delivery(
        conn, delivery_id=event.delivery_id, event=event.event, action=event.data.get("action"),
        kind=kind, conversation=conversation, spec=spec, notice=notice)))
    if job_id is None:
        log.info("delivery %s: duplicate, or the thread was already told", event.delivery_id)
        metrics.DELIVERIES.labels("duplicate").inc()
        return _JSON({"ok": True, "queued": False, "reason": "duplicate delivery or notice already sent"})
    log.info("queued job %s (%s) for %s from delivery %s", job_id, kind, conversation, event.delivery_id)
    metrics.DELIVERIES.labels("queued").inc()
    return _JSON({"ok": True, "queued": True, "job": job_id, "kind": kind}, status_code=202)


def _request_stop(conn: Any, conversation: str) -> int | None:
    """Flag the thread's running and queued episodes for cancellation; a running one's worker
    notices within a second, a queued one ends as stopped when claimed. Returns the first id."""
    ids = [row["id"] for row in conn.execute(
        "SELECT id FROM jobs WHERE conversation = ? AND kind = 'episode' "
        "AND status IN ('queued', 'running') ORDER BY id", [conversation])]
    if not ids:
        return None
    conn.executemany("UPDATE jobs SET cancel_requested = 1 WHERE id = ?", [[i] for i in ids])
    return ids[0]


def extract_trigger(event: str, data: dict) -> dict | None:
    """Who said what where, for the events we act on; None for anything else."""
    action, repo = data.get("action"), data.get("repository") or {}
    base = {"repo": repo.get("full_name"), "repo_id": repo.get("id"),
            "installation_id": (data.get("installation") or {}).get("id")}
    if event == "issue_comment" and action == "created":
        issue, comment = data["issue"], data["comment"]
        return {**base, **_who(comment), "number": issue["number"], "is_pr": "pull_request" in issue,
                "title": issue.get("title", ""), "body": comment.get("body"),
                "target": {"type": "issue_comment", "id": comment["id"]}}
    if event == "pull_request_review_comment" and action == "created":
        pull, comment = data["pull_request"], data["comment"]
        top = comment.get("in_reply_to_id") or comment["id"]
        return {**base, **_who(comment), "number": pull["number"], "is_pr": True,
                "title": pull.get("title", ""), "body": comment.get("body"),
                "target": {"type": "review_comment", "id": comment["id"], "thread": top,
                           "path": comment.get("path"), "line": comment.get("line")}}
    if event == "pull_request_review" and action == "submitted":
        pull, review = data["pull_request"], data["review"]
        return {**base, **_who(review), "number": pull["number"], "is_pr": True,
                "title": pull.get("title", ""), "body": review.get("body"),
                "target": {"type": "review", "id": review["id"]}}
    if event in ("issues", "pull_request") and action == "opened":
        item = data["issue" if event == "issues" else "pull_request"]
        return {**base, **_who(item), "number": item["number"], "is_pr": event == "pull_request",
                "title": item.get("title", ""), "body": item.get("body"),
                "target": {"type": "issue", "id": item["number"]}}
    return None


def _who(item: dict) -> dict:
    user = item.get("user") or {}
    return {"author": user.get("login", ""), "author_id": user.get("id"), "author_type": user.get("type", "User"),
            "association": item.get("author_association", "NONE")}
