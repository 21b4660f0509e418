"""Every request names this service as its Host (bot/settings/address.py), or is answered 421 with
a short page: a web page whose DNS name was rebound to this machine reads and drives nothing.

`/healthz` and `/readyz` (GET, HEAD) answer any Host: orchestrators probe them with the pod's address,
and they only read (liveness, readiness and job counts).

Each refusal is said in the log, once per Host a minute (`RefusalLog`): the Host received, bounded
and quoted, the hosts this service answers to, and the fix. The fix is never built from the Host
received: that is whatever a client sent, a rebinding page's own name included."""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.settings.address import allowed_hosts, host_allowed

log = logging.getLogger("bot.web.host_check")
LOG_EVERY_S = 60.0
MAX_REMEMBERED = 256  # Hosts whose last log line is remembered; beyond, the oldest is forgotten
SHOWN_CHARS = 100

PROBES = frozenset({"/healthz", "/readyz"})
REFUSED = ("<!doctype html><html lang=en><meta charset=utf-8><title>Not this bot's address</title>"
           "<p>This request names another host than this bot's. Open the bot at its own address "
           "(BOT_PUBLIC_URL, or the address it listens on).</p></html>")


class RefusalLog:
    """One warning per refused Host a minute."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self._clock = clock
        self.remembered: dict[str, float] = {}  # shown Host -> when it was last logged

    def note(self, hosts: Sequence[str], allowed: str, fix: str) -> None:
        shown, now = _shown(hosts), self._clock()
        last = self.remembered.pop(shown, None)
        if last is not None and now - last < LOG_EVERY_S:
            self.remembered[shown] = last
            return
        while len(self.remembered) >= MAX_REMEMBERED:
            del self.remembered[next(iter(self.remembered))]
        self.remembered[shown] = now
        log.warning("refused a request naming Host %s (421): this service answers to %s; %s", shown, allowed, fix)


def _shown(hosts: Sequence[str]) -> str:
    """The Host header(s) received, quoted (control characters escaped) and cut to SHOWN_CHARS."""
    if not hosts:
        return "(none)"
    if len(hosts) > 1:
        return f"({len(hosts)} Host headers)"
    value = hosts[0]
    return repr(value[:SHOWN_CHARS]) + ("…" if len(value) > SHOWN_CHARS else "")


def _fix(public_url: str | None) -> str:
    if public_url:
        return "if the service is reached at another address too, make that address BOT_PUBLIC_URL's"
    return ("if people open it at another address or port (a container published with -p 8080:8000, a "
            "proxy), set BOT_PUBLIC_URL to that URL, e.g. BOT_PUBLIC_URL=http://localhost:8080")


class HostCheck:
    def __init__(self, app: ASGIApp):
        self.app = app
        self.refusals = RefusalLog()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or _probe(scope) or _allowed(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            self._note(scope)
            refusal = HTMLResponse(REFUSED, status_code=421, headers={
                "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'",
                "X-Content-Type-Options": "nosniff"})
            await refusal(scope, receive, send)


    def _note(self, scope: Scope) -> None:
        settings = scope["app"].state.settings
        self.refusals.note(Headers(scope=scope).getlist("host"), allowed_hosts(settings, scope.get("server")),
                           _fix(settings.text("BOT_PUBLIC_URL")))


def _probe(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["path"] in PROBES and scope["method"] in ("GET", "HEAD")


def _allowed(scope: Scope) -> bool:
    """Against the settings the app was handed when it started (its lifespan sets them)."""
    hosts = Headers(scope=scope).getlist("host")
    return len(hosts) == 1 and host_allowed(scope["app"].state.settings, hosts[0], scope.get("server"))
