"""`POST /webhook`: verify, parse, decide (bot/intake/decide.py), enqueue, answer 202. No GitHub
call, no agent work.

Refusals: more bodies being read than BOT_WEBHOOK_CONCURRENCY 503 with Retry-After, a body
slower than BOT_WEBHOOK_BODY_TIMEOUT 408, body over 25 MB 413 (refused before reading it all;
bot/web/intake_body.py), all before the signature is checked; bad or missing signature 401;
malformed JSON, missing headers or a signed payload without the fields its event has 400 (GitHub
does not redeliver it); events we do not act on 202 with nothing stored. Every refusal is logged
with the delivery id, never the body.

A delivery is deduplicated by the object it is about (`trigger_key`: the comment, review or item),
so its redelivery (one delivery id names one signed body) and a signed body replayed under a new
delivery id are duplicates (bot/service/store.py:enqueue_delivery).
`@bot stop` is a job like any other command: the worker checks the stopper's permission before
anything is cancelled (bot/service/commands.py); the intake makes no GitHub call.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import http
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs

import orjson
from gidgethub import BadRequest, ValidationFailure, sansio
from starlette.requests import Request
from starlette.responses import JSONResponse

from bot import metrics
from bot.config import Settings
from bot.db import Database
from bot.intake import config_event
from bot.intake.decide import NOT_ALLOWED, Episode, Event, Ignore, Reply, decide
from bot.intake.payload import Malformed, parsed
from bot.job.conversations import thread_key
from bot.service import reply_cap, retention, store
from bot.web import config_intake, review_push
from bot.web.intake_body import MAX_BODY_BYTES, RETRY_AFTER_S, BodySlots, Gone, TooLarge, TooSlow, read_body

log = logging.getLogger("bot.web.intake")
_REQUIRED_HEADERS = ("x-github-event", "x-github-delivery")
_READ_HEADERS = frozenset({b"x-github-event", b"x-github-delivery", b"x-hub-signature-256",
                           b"content-type", b"content-length"})
_COUNT = {outcome: metrics.DELIVERIES.labels(outcome) for outcome in ("ping", "ignored", "duplicate", "queued")}


@dataclass(frozen=True)
class IntakeSettings:
    """What every delivery reads of the service's settings, read once per settings object (they
    are frozen; the settings pages put a new object in `app.state.settings`, which is read anew)."""

    settings: Settings
    secret: str = field(repr=False)
    handle: str
    outsider_window_s: float
    body_timeout_s: float

    @classmethod
    def of(cls, state: Any) -> IntakeSettings:
        current: Settings = state.settings
        known = getattr(state, "intake_settings", None)
        if known is None or known.settings is not current:
            known = state.intake_settings = cls(
                current, current.webhook_secret(), current.handle, current.number("BOT_OUTSIDER_REPLY_WINDOW"),
                current.number("BOT_WEBHOOK_BODY_TIMEOUT"))
        return known


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
    settings = IntakeSettings.of(request.app.state)
    event = await _admitted(request, headers, delivery, settings)
    if isinstance(event, JSONResponse):
        return event
    if event.event == "ping":
        _COUNT["ping"].inc()
        return _JSON({"ok": True, "pong": True})
    try:
        response = await accept(request.app.state.db, event, settings.outsider_window_s, handle=settings.handle)
    except Malformed as exc:  # signed by GitHub, but not the payload its event has: never redelivered
        return _refuse(400, delivery, f"malformed payload: {exc}")
    except Exception as exc:  # nothing stored (a full disk, a lost database): GitHub may redeliver
        log.exception("delivery %s could not be stored", delivery)
        return _refuse(503, delivery, f"could not store the delivery ({type(exc).__name__}); try again later")
    pool = getattr(request.app.state, "pool", None)
    if pool is not None and response.status_code == 202:
        pool.wake()
    return response


async def _admitted(request: Request, headers: dict[str, str], delivery: str,
                    settings: IntakeSettings) -> sansio.Event | JSONResponse:
    """The verified event, or the refusal. Until the signature is checked the sender is anyone:
    it holds one of a capped number of slots, for a bounded time and size."""
    slots = BodySlots.of(request.app.state)
    if not slots.free():
        return _refuse(503, delivery, "too many webhook bodies being read at once; try again later",
                       headers={"Retry-After": str(RETRY_AFTER_S)})
    with slots.taken():
        try:
            body = await read_body(request, headers, settings.body_timeout_s)
        except TooLarge:
            return _refuse(413, delivery, f"body over {MAX_BODY_BYTES} bytes")
        except TooSlow:
            return _refuse(408, delivery, "the body did not arrive in time")
        except Gone:
            return _refuse(400, delivery, "the sender hung up before the body was complete")
        try:
            return _verified_event(headers, body, settings.secret)
        except ValidationFailure as exc:
            return _refuse(401, delivery, f"signature rejected: {exc}")
        except (BadRequest, KeyError, ValueError, orjson.JSONDecodeError) as exc:
            return _refuse(400, delivery, f"malformed delivery: {type(exc).__name__}")


def verify_signature(secret: str, body: bytes, signature: str) -> None:
    """ValidationFailure unless `signature` is `sha256=` and the hex HMAC-SHA256 of `body` under
    `secret`, compared in constant time as bytes: a header value outside ASCII is a mismatch
    (gidgethub's check compares text, and raised TypeError for it)."""
    expected = b"sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(signature.encode("utf-8", "surrogatepass"), expected):
        raise ValidationFailure("payload's signature does not align with the secret")


def _verified_event(headers: dict[str, str], body: bytes, secret: str) -> sansio.Event:
    """HMAC over the raw bytes first, then headers and JSON."""
    signature = headers.get("x-hub-signature-256")
    if not signature:
        raise ValidationFailure("signature is missing")
    if not signature.startswith("sha256="):  # gidgethub's check would also verify a `sha1=` value
        raise ValidationFailure("X-Hub-Signature-256 must hold a sha256= value")
    verify_signature(secret, body, signature)
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
    _COUNT["ignored"].inc()
    return _JSON({"ok": True, "queued": False, "reason": reason}, status_code=202)


async def accept(db: Database, event: sansio.Event, outsider_window_s: float, *, handle: str) -> JSONResponse:
    """Decide (bot/intake/decide.py) what asks the bot's `handle`, and queue at most one job; a
    reply to someone without permission at most once per thread per `outsider_window_s`. Raises
    Malformed for a payload without the fields its event has (before anything is stored)."""
    data = event.data
    decision = await off_loop_if_long(_longest_body(data), lambda: decide(
        Event(event.event, data, delivery=event.delivery_id), handle))
    if isinstance(decision, Ignore):
        if event.event in config_event.EVENTS and (jobs := parsed(lambda: config_event.candidates(event.event, data))):
            return await config_intake.queued(db, event, jobs)  # .github/bot.yml read again
        if retention.note_closed(db, event.event, data):  # when a thread's CLI homes may go
            return _ignored(event.delivery_id, f"{event.event}.{data.get('action')} noted for retention")
        return _ignored(event.delivery_id, decision.why)
    return await _enqueue(db, event, decision, outsider_window_s)


T = TypeVar("T")
# Deciding what is live in a comment is a CommonMark parse: cheap for what people write, up to a
# second for a crafted 64 KiB one, which must not hold the loop that answers every other webhook.
LONG_BODY = 4096


async def off_loop_if_long(body: object, work: Callable[[], T]) -> T:
    """`work()`, on a thread when the text it reads is long."""
    if isinstance(body, str) and len(body) > LONG_BODY:
        return await asyncio.to_thread(work)
    return work()


def _longest_body(data: dict[str, Any]) -> str | None:
    """The longest text the decision may parse: the comment's, the review's or the item's."""
    bodies = [item.get("body") for name in ("comment", "review", "issue", "pull_request")
              if isinstance(item := data.get(name), dict)]
    return max((body for body in bodies if isinstance(body, str)), key=len, default=None)


async def _enqueue(db: Database, event: sansio.Event, decision: Reply | Episode,
                   outsider_window_s: float) -> JSONResponse:
    spec = decision.spec
    conversation = thread_key(spec.repo, spec.number)
    notice = NOT_ALLOWED if spec.reply == NOT_ALLOWED else None
    stored = decision.stored if decision.stored is not None else spec.to_dict()
    # group commit: one COMMIT for the deliveries of this loop iteration; 202 only after it
    enqueue = review_push.coalesced if spec.automatic and spec.automatic.kind == review_push.KIND \
        else store.enqueue_delivery
    job_id = await store.commit(db, reply_cap.capped(stored, conversation, outsider_window_s, lambda conn: enqueue(
        conn, delivery_id=event.delivery_id, event=event.event, action=event.data.get("action"),
        kind=decision.kind, conversation=conversation, spec=stored, notice=notice)))
    if job_id is None:
        log.info("delivery %s: duplicate, or the thread was already told", event.delivery_id)
        _COUNT["duplicate"].inc()
        return _JSON({"ok": True, "queued": False, "reason": "duplicate delivery or notice already sent"})
    what = f"automatic {spec.automatic.kind}" if spec.automatic else decision.kind
    log.info("queued job %s (%s) for %s from delivery %s", job_id, what, conversation, event.delivery_id)
    _COUNT["queued"].inc()
    return _JSON({"ok": True, "queued": True, "job": job_id, "kind": decision.kind}, status_code=202)
