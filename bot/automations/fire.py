"""Firing an automation over HTTP (`fire: {}` in `.github/bot.yml`): what the caller may send, read
through an allowlist, and the fired run's slot, claimed once per idempotency key and held to the
caps, its job queued in the claim's transaction. The route is bot/web/fire_route.py; the token
bot/automations/fire_tokens.py; the run itself that of a scheduled slot, in the automation's issue
(bot/automations/scheduled_run.py).

    text = read_body(raw)                  # FireInputError (400) for anything but {"text": "..."}
    key = read_key(headers.get("idempotency-key"))
    outcome = fire(db, "o/r", automation, target, key, text, queue_job, account_cap=20)   # Fired | Refused
    outcome = fire(db, where, automation, key, "", queue_job, account_cap=20, writer="alice")   # Run now

The slot is `fire:<key>` (a fresh one when the caller sends no key): a second request with the same
key is answered with the first one's job and runs nothing. A fired run counts toward the
automation's `max_runs_per_day`, and toward the hourly cap of one account, the token's
(`fire:o/r/name`: no person caused it, and one leaked token must not outrun the caps).
"""
from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from bot.automations import caps, scheduled_job
from bot.automations.runs import REFUSED, RUN
from bot.db import Database
from bot.errors import BotError
from bot.intake.spec import JobSpec
from bot.workspace.repo_config import ConfigError, parse
from bot.workspace.repo_config_model import Automation

MAX_TEXT_CHARS = 8_000
MAX_BODY_BYTES = 64 * 1024  # 8,000 characters of four UTF-8 bytes, escaped, fit
MAX_KEY_CHARS = 100
BODY_KEYS = frozenset({"text"})
# queues the fired slot's job inside the claim's transaction and returns its id (bot/service/schedules.py)
QueueJob = Callable[[Database, JobSpec], int]


class FireInputError(BotError, ValueError):
    """What the caller sent is outside the allowlist: the message says what, never echoes it."""


class BodyTooLarge(FireInputError):
    """The body is (or says it is) over MAX_BODY_BYTES."""


@dataclass(frozen=True)
class Target:
    """Where a fired run acts: the repository as the bot last stored its `.github/bot.yml`."""

    repo: str
    repo_id: int | None
    installation_id: int


@dataclass(frozen=True)
class Fired:
    job_id: int
    slot: str
    replayed: bool = False  # the idempotency key's run, queued by an earlier request


@dataclass(frozen=True)
class Refused:
    why: str


def read_body(raw: bytes) -> str:
    """The request's text: "" for an empty body, else a JSON object whose only key is `text`, a
    string of at most MAX_TEXT_CHARS characters."""
    if len(raw) > MAX_BODY_BYTES:
        raise BodyTooLarge(f"the body is over {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        return ""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise FireInputError('the body is not JSON: send {"text": "..."} or nothing') from None
    if not isinstance(data, dict):
        raise FireInputError('the body is not a JSON object: send {"text": "..."} or nothing')
    unknown = set(data) - BODY_KEYS
    if unknown:
        raise FireInputError(f"the body has {len(unknown)} unknown key(s); the only key is `text`")
    text = data.get("text", "")
    if not isinstance(text, str):
        raise FireInputError("`text` is not a string")
    if len(text) > MAX_TEXT_CHARS:
        raise FireInputError(f"`text` is over {MAX_TEXT_CHARS:,} characters")
    if "\x00" in text:
        raise FireInputError("`text` holds a NUL character")
    return text


def read_key(header: str | None) -> str | None:
    """The Idempotency-Key: 1 to 100 of letters, digits and `-_.:`, or None when not sent."""
    if header is None:
        return None
    if not 0 < len(header) <= MAX_KEY_CHARS or not all(c.isascii() and (c.isalnum() or c in "-_.:") for c in header):
        raise FireInputError(f"Idempotency-Key must be 1 to {MAX_KEY_CHARS} letters, digits, '-', '_', '.' or ':'")
    return header


def target(db: Database, repo: str, name: str) -> tuple[Target, Automation] | None:
    """The repository and its automation `name` as last stored, when that automation declares `fire`
    and an installation of the App is known for the repository; None otherwise."""
    return _stored(db, repo, name, lambda automation: automation.on.fire is not None)


def runnable(db: Database, repo: str, name: str) -> tuple[Target, Automation] | None:
    """As `target`, for a writer's Run now: an automation that runs in its own issue (a schedule or
    `fire`); one run by an event has no event to run on."""
    return _stored(db, repo, name, lambda automation: automation.on.fire is not None or bool(automation.on.schedule))


def _stored(db: Database, repo: str, name: str,
            wanted: Callable[[Automation], bool]) -> tuple[Target, Automation] | None:
    rows = db.query("SELECT repo_id, installation_id, text, source FROM automation_configs WHERE repo = ?", [repo])
    if not rows or rows[0]["installation_id"] is None:
        return None
    try:
        found = parse(rows[0]["text"], source=rows[0]["source"] or "").automations
    except ConfigError:
        return None
    automation = next((a for a in found if a.name == name and wanted(a)), None)
    if automation is None:
        return None
    return Target(repo, rows[0]["repo_id"], int(rows[0]["installation_id"])), automation


def fire(db: Database, where: Target, automation: Automation, key: str | None, text: str, queue_job: QueueJob,
         account_cap: int, *, writer: str | None = None) -> Fired | Refused:
    """`writer`: the login whose Run now this is (the settings page, their write permission asked of
    GitHub): the slot is `now:<key>` and the run counts toward that person's hourly cap."""
    slot = (scheduled_job.RUN_NOW if writer else scheduled_job.FIRED) + (key or uuid.uuid4().hex)
    account = writer or account_of(where.repo, automation.name)
    with db.transaction() as conn:
        admitted = caps.admit(conn, where.repo, automation, slot, None, account, account_cap)
        if admitted.refused:
            return Refused(admitted.refused)
        if admitted.runs:
            spec = scheduled_job.fired_spec_for(where.repo, where.repo_id, where.installation_id, automation, slot,
                                                text)
            job_id = queue_job(conn, spec)
            conn.execute("UPDATE automation_runs SET job_id = ? WHERE repo = ? AND automation = ? AND slot = ?",
                         [job_id, where.repo, automation.name, slot])
            return Fired(job_id, slot)
        rows = conn.query("SELECT job_id, kind, outcome FROM automation_runs WHERE repo = ? AND automation = ? "
                          "AND slot = ?", [where.repo, automation.name, slot])
    if rows and (rows[0]["kind"] or RUN) != REFUSED and rows[0]["job_id"] is not None:
        return Fired(int(rows[0]["job_id"]), slot, replayed=True)
    return Refused(str(rows[0]["outcome"] or "refused") if rows else "another request holds this key")


def account_of(repo: str, name: str) -> str:
    """The account a fired run counts against (no GitHub login holds `:` or `/`)."""
    return f"fire:{repo}/{name}"


def issue_of(db: Database, repo: str, name: str) -> int | None:
    """The automation's issue, where its fired runs answer, once one was opened."""
    rows = db.query("SELECT number FROM automation_issues WHERE repo = ? AND automation = ?", [repo, name])
    return int(rows[0]["number"]) if rows else None
