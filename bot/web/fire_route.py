"""`POST /automations/{owner}/{repo}/{name}`: fire an automation that declares `fire: {}`, with its
token (`Authorization: Bearer bota_…`), an optional JSON body `{"text": "…"}` and an optional
`Idempotency-Key` (docs/automations.md, "Fire by HTTP"). No GitHub call: the run is queued, and the
worker runs it in the automation's issue as it runs a scheduled slot.

Answers, in this order:
- 503 while the GitHub App is not configured;
- 429 with Retry-After for an address that sent MAX_FAILURES wrong tokens lately (bot/web/fire_limit.py);
- 401 for a missing, wrong or revoked token, or a path that names no token: the same answer whatever
  was wrong, after the same work;
- 400 for a body or key outside the allowlist (bot/automations/fire.py), 413 for a body over its bound,
  408 for one that does not arrive in time;
- 404 when the automation no longer declares `fire` (as the bot last read `.github/bot.yml`);
- 429 when a cap refuses the run (`max_runs_per_day`, the token's hourly cap);
- 202 with the job's id, the slot, and the automation's issue when it has one; the same job again for
  a repeated Idempotency-Key.
"""
from __future__ import annotations

import asyncio
import logging
import re

import orjson
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from bot.automations import fire, fire_tokens
from bot.automations.fire import BodyTooLarge, Fired, FireInputError
from bot.service import schedules
from bot.web.fire_limit import FailureLimiter

log = logging.getLogger("bot.web.fire_route")
PATH = "/automations/{owner}/{repo}/{name}"
_OWNER_OR_REPO = re.compile(r"^[A-Za-z0-9_.\-]{1,100}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_BEARER = re.compile(r"^Bearer ([!-~]{1,200})$", re.IGNORECASE)


class _JSON(JSONResponse):
    def render(self, content: object) -> bytes:
        return orjson.dumps(content)


async def fire_automation(request: Request) -> JSONResponse:
    state = request.app.state
    if getattr(state, "missing_config", None):
        return _answer(503, "the GitHub App is not configured")
    client = request.client.host if request.client else "-"
    limiter = FailureLimiter.of(state)
    if (wait := limiter.blocked(client)) is not None:
        return _answer(429, "too many wrong tokens from this address; try again later",
                       headers={"Retry-After": str(wait)})
    repo, name = _repo_and_name(request)
    row = fire_tokens.check(state.db, repo, name, _bearer(request.headers.get("authorization")))
    if row is None:
        limiter.failed(client)
        log.warning("fire refused: a wrong or missing token for %s %s from %s", repo[:200], name[:63], client)
        return _answer(401, "no valid token for this automation", headers={"WWW-Authenticate": "Bearer"})
    try:
        key = fire.read_key(request.headers.get("idempotency-key"))
        text = fire.read_body(await _body(request))
    except BodyTooLarge as exc:
        return _answer(413, str(exc))
    except FireInputError as exc:
        return _answer(400, str(exc))
    except TimeoutError:
        return _answer(408, "the body did not arrive in time")
    except ClientDisconnect:
        return _answer(400, "the caller hung up before the body was complete")
    return _fired(request, repo, name, key, text)


def _fired(request: Request, repo: str, name: str, key: str | None, text: str) -> JSONResponse:
    state, settings = request.app.state, request.app.state.settings
    found = fire.target(state.db, repo, name)
    if found is None:
        log.info("fire of %s %s refused: it no longer declares fire", repo, name)
        return _answer(404, f"{name} of {repo} does not declare `fire` (as last read from the default branch)")
    where, automation = found
    outcome = fire.fire(state.db, where, automation, key, text, schedules.queue,
                        account_cap=int(settings.number("BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR")))
    if not isinstance(outcome, Fired):
        log.info("fire of %s %s refused: %s", repo, name, outcome.why)
        return _answer(429, f"not run: {outcome.why}")
    if state.pool is not None and not outcome.replayed:
        state.pool.wake()
    log.info("fired %s %s: job %s, slot %s%s", repo, name, outcome.job_id, outcome.slot,
             " (the key's earlier run)" if outcome.replayed else "")
    number = fire.issue_of(state.db, repo, name)
    return _JSON({"ok": True, "job": outcome.job_id, "automation": name, "repository": repo, "slot": outcome.slot,
                  "replayed": outcome.replayed, "issue": number,
                  "issue_url": f"{settings.server_url}/{repo}/issues/{number}" if number else None}, status_code=202)


def _repo_and_name(request: Request) -> tuple[str, str]:
    """The path's repository and automation; a path outside their patterns names no token ("", "")."""
    owner, repo, name = (request.path_params.get(k, "") for k in ("owner", "repo", "name"))
    if _OWNER_OR_REPO.match(owner) and _OWNER_OR_REPO.match(repo) and _NAME.match(name):
        return f"{owner}/{repo}", name
    return "", ""


def _bearer(header: str | None) -> str:
    """The token of `Authorization: Bearer TOKEN`, else "" (which matches no token)."""
    found = _BEARER.match(header or "")
    return found.group(1) if found else ""


async def _body(request: Request) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > fire.MAX_BODY_BYTES:
        raise BodyTooLarge(f"the body is over {fire.MAX_BODY_BYTES} bytes")
    chunks, size = [], 0
    async with asyncio.timeout(request.app.state.settings.number("BOT_WEBHOOK_BODY_TIMEOUT")):
        async for chunk in request.stream():
            size += len(chunk)
            if size > fire.MAX_BODY_BYTES:
                raise BodyTooLarge(f"the body is over {fire.MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
    return b"".join(chunks)


def _answer(status: int, reason: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return _JSON({"ok": False, "reason": reason}, status_code=status, headers=headers)


routes = [Route(PATH, fire_automation, methods=["POST"], name="fire_automation")]
