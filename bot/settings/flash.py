"""The outcome of a key test, carried across the redirect after its post (so a reload repeats no
call): a signed cookie that lives a minute, read once by the page the test was made on."""
from __future__ import annotations

from dataclasses import dataclass, replace

from starlette.requests import Request
from starlette.responses import Response

from bot.config import Settings
from bot.settings.pages import Effective
from bot.settings.session import sign, unsign

FLASH_COOKIE = "bot_key_test"
FLASH_TTL = 60
FAILED_REASON = "the test above failed"


@dataclass(frozen=True)
class KeyTestFlash:
    page: str  # the settings page the test was made on
    agent: str
    fingerprint: str  # of the tested key
    ok: bool
    message: str


def carry(settings: Settings, response: Response, flash: KeyTestFlash, secure: bool) -> None:
    payload = {"page": flash.page, "agent": flash.agent, "fingerprint": flash.fingerprint,
               "ok": flash.ok, "message": flash.message}
    response.set_cookie(FLASH_COOKIE, sign(settings, payload, FLASH_TTL), max_age=FLASH_TTL, path="/settings",
                        httponly=True, samesite="lax", secure=secure)


def taken(request: Request) -> KeyTestFlash | None:
    """The flash meant for this page, if one came with the request (unsigned or stale ones are ignored)."""
    payload = unsign(request.app.state.settings, request.cookies.get(FLASH_COOKIE))
    if not payload or payload.get("page") != request.url.path:
        return None
    try:
        return KeyTestFlash(str(payload["page"]), str(payload["agent"]), str(payload["fingerprint"]),
                            payload["ok"] is True, str(payload["message"]))
    except KeyError:
        return None


def forget(request: Request, response: Response) -> None:
    """Shown once: the page that read it drops the cookie."""
    if FLASH_COOKIE in request.cookies:
        response.delete_cookie(FLASH_COOKIE, path="/settings")


def with_test_result(rows: list[Effective], flash: KeyTestFlash | None) -> list[Effective]:
    """"Usable now" of the row whose key just failed its test says so, rather than yes."""
    if flash is None or flash.ok:
        return rows
    return [replace(row, usable=False, reason=FAILED_REASON)
            if row.agent == flash.agent and row.fingerprint == flash.fingerprint else row for row in rows]
