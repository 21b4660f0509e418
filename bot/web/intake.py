"""`POST /webhook`: verify, parse, decide, enqueue, answer 202. No GitHub call, no agent work.

Refusals: more bodies being read than BOT_WEBHOOK_CONCURRENCY 503 with Retry-After, a body
slower than BOT_WEBHOOK_BODY_TIMEOUT 408, body over 25 MB 413 (refused before reading it all;
bot/web/intake_body.py), all before the signature is checked; bad or missing signature 401;
malformed JSON, missing headers or a signed payload without the fields its event has 400 (GitHub
does not redeliver it); events we do not act on 202 with nothing stored. Every refusal is logged
with the delivery id, never the body.

A delivery is deduplicated by its delivery id and by the object it is about (`trigger_key`: the
comment, review or item), so a signed body replayed under a new delivery id is a duplicate.
`@bot stop` is a job like any other command: the worker checks the stopper's permission before
anything is cancelled (bot/service/stopping.py); the intake makes no GitHub call.
"""
from __future__ import annotations

import asyncio
import http
import logging
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qs

import orjson
from gidgethub import BadRequest, ValidationFailure, sansio
from starlette.requests import Request
from starlette.responses import JSONResponse

from adapters import base as adapters
from bot import config, metrics
from bot.db import Database
from bot.intake import grammar, triggers
from bot.intake.payload import Malformed, parsed, require_shape, trigger_key
from bot.job.conversations import thread_key
from bot.permissions import association_may_trigger, is_bot_author
from bot.service import reply_cap, retention, store
from bot.web.intake_body import MAX_BODY_BYTES, RETRY_AFTER_S, BodySlots, Gone, TooLarge, TooSlow, read_body

log = logging.getLogger("bot.web.intake")
REPLIES = frozenset({"help", "status", "unknown_agent"})  # commands that only answer
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
    event = await _admitted(request, headers, delivery)
    if isinstance(event, JSONResponse):
        return event
    if event.event == "ping":
        metrics.DELIVERIES.labels("ping").inc()
        return _JSON({"ok": True, "pong": True})
    try:
        response = await decide(request.app.state.db, event)
    except Malformed as exc:  # signed by GitHub, but not the payload its event has: never redelivered
        return _refuse(400, delivery, f"malformed payload: {exc}")
    except Exception as exc:  # nothing stored (a full disk, a lost database): GitHub may redeliver
        log.exception("delivery %s could not be stored", delivery)
        return _refuse(503, delivery, f"could not store the delivery ({type(exc).__name__}); try again later")
    pool = getattr(request.app.state, "pool", None)
    if pool is not None and response.status_code == 202:
        pool.wake()
    return response


async def _admitted(request: Request, headers: dict[str, str], delivery: str) -> sansio.Event | JSONResponse:
    """The verified event, or the refusal. Until the signature is checked the sender is anyone:
    it holds one of a capped number of slots, for a bounded time and size."""
    slots = BodySlots.of(request.app.state)
    if not slots.free():
        return _refuse(503, delivery, "too many webhook bodies being read at once; try again later",
                       headers={"Retry-After": str(RETRY_AFTER_S)})
    with slots.taken():
        try:
            body = await read_body(request, headers)
        except TooLarge:
            return _refuse(413, delivery, f"body over {MAX_BODY_BYTES} bytes")
        except TooSlow:
            return _refuse(408, delivery, "the body did not arrive in time")
        except Gone:
            return _refuse(400, delivery, "the sender hung up before the body was complete")
        try:
            return _verified_event(headers, body)
        except ValidationFailure as exc:
            return _refuse(401, delivery, f"signature rejected: {exc}")
        except (BadRequest, KeyError, ValueError, orjson.JSONDecodeError) as exc:
            return _refuse(400, delivery, f"malformed delivery: {type(exc).__name__}")


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


def _refuse(status: int, delivery: str, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
    log.warning("webhook refused: status=%s delivery=%s reason=%s", status, delivery, reason)
    metrics.DELIVERIES.labels(f"refused_{status}").inc()
    return _JSON({"ok": False, "reason": reason}, status_code=status, headers=headers)


def _ignored(delivery: str, reason: str) -> JSONResponse:
    log.info("webhook ignored: delivery=%s reason=%s", delivery, reason)
    metrics.DELIVERIES.labels("ignored").inc()
    return _JSON({"ok": True, "queued": False, "reason": reason}, status_code=202)


async def decide(db: Database, event: sansio.Event) -> JSONResponse:
    """Turn a verified event into at most one job. Raises Malformed for a payload without the
    fields its event has (before anything is stored)."""
    data = event.data
    automatic = await off_loop_if_long(_item_body(event.event, data),
                                       lambda: parsed(lambda: triggers.automatic(event.event, data)))
    if found := automatic:  # a label, an assignment, …
        require_shape(found[0])["trigger_key"] = parsed(lambda: trigger_key(event.event, data))
        job = await _enqueue_automatic(db, event.delivery_id, event.event, data.get("action"), found)
        metrics.DELIVERIES.labels("queued" if job is not None else "duplicate").inc()
        return _JSON({"ok": True, "queued": job is not None, "job": job, "kind": "episode"}, status_code=202)
    if retention.note_closed(db, event.event, data):  # when a thread's CLI homes may go
        return _ignored(event.delivery_id, f"{event.event}.{data.get('action')} noted for retention")
    trigger = parsed(lambda: extract_trigger(event.event, data))
    if trigger is None:
        return _ignored(event.delivery_id, f"{event.event}.{data.get('action')} is not acted on")
    require_shape(trigger)["trigger_key"] = parsed(lambda: trigger_key(event.event, data))
    if is_bot_author(trigger["author"], trigger["author_type"]):
        return _ignored(event.delivery_id, "author is a bot")
    if not trigger["installation_id"]:
        return _ignored(event.delivery_id, "not delivered to an installed GitHub App")
    body = trigger.pop("body")
    command = await off_loop_if_long(body, lambda: grammar.parse(body, config.handle(), tuple(adapters.names())))
    if command is None:
        return _ignored(event.delivery_id, "no command for us")
    return await _enqueue(db, event, trigger, command)


T = TypeVar("T")
# Deciding what is live in a comment is a CommonMark parse: cheap for what people write, up to a
# second for a crafted 64 KiB one, which must not hold the loop that answers every other webhook.
LONG_BODY = 4096


async def off_loop_if_long(body: object, work: Callable[[], T]) -> T:
    """`work()`, on a thread when the text it reads is long."""
    if isinstance(body, str) and len(body) > LONG_BODY:
        return await asyncio.to_thread(work)
    return work()


def _item_body(event: str, data: dict) -> object:
    item = data.get("pull_request" if event == "pull_request" else "issue")
    return item.get("body") if isinstance(item, dict) else None


def job_kind(command: grammar.Command, association: str | None) -> tuple[str, str | None]:
    """(job kind, reply) for a command that passed the grammar. Plain replies (help, status, an
    unknown agent's list) are answered to anyone. The association is only the pre-filter for the
    rest: whoever passes it gets a job (an episode, a stop, any command added later) that the
    worker runs only after GitHub's permission check (bot/service/commands.py)."""
    if command.kind in REPLIES:
        return "reply", command.kind
    if not association_may_trigger(association):
        return "reply", "not_allowed"
    return ("episode" if command.kind == "run" else command.kind), None


async def _enqueue(db: Database, event: sansio.Event, trigger: dict, command: grammar.Command) -> JSONResponse:
    conversation = thread_key(trigger["repo"], trigger["number"])
    spec = {**trigger, "event": event.event, "delivery": event.delivery_id,
            "command": {"kind": command.kind, "agent": command.agent, "new_session": command.new_session,
                        "request": command.request, "unknown_name": command.unknown_name,
                        "review": command.review, "agents": list(command.agents)}}
    kind, reply = job_kind(command, trigger["association"])
    notice = "not_allowed" if reply == "not_allowed" else None
    if reply is not None:
        spec["reply"] = reply
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


async def _enqueue_automatic(db: Database, delivery_id: str, event: str, action: str | None,
                  found: tuple[dict, grammar.Command]) -> int | None:
    """The job, like a comment's; None for a duplicate delivery."""
    trigger, command = found
    if not trigger["installation_id"]:
        return None  # not delivered to an installed GitHub App
    spec = {**trigger, "event": event, "delivery": delivery_id,
            "command": {"kind": command.kind, "agent": command.agent, "new_session": False,
                        "request": command.request, "unknown_name": None, "review": command.review,
                        "agents": list(command.agents)}}
    conversation = thread_key(trigger["repo"], trigger["number"])
    job_id = await store.commit(db, lambda conn: store.enqueue_delivery(
        conn, delivery_id=delivery_id, event=event, action=action, kind="episode", conversation=conversation,
        spec=spec))
    log.info("automatic %s: job %s for %s", trigger["automatic"]["kind"], job_id, conversation)
    return job_id


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
