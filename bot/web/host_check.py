"""Every request names this service as its Host (bot/settings/address.py), or is answered 421 with
a short page: a web page whose DNS name was rebound to this machine reads and drives nothing.

`/healthz` and `/readyz` (GET, HEAD) answer any Host: orchestrators probe them with the pod's address,
and they only read (liveness, readiness and job counts)."""
from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.settings.address import host_allowed

PROBES = frozenset({"/healthz", "/readyz"})
REFUSED = ("<!doctype html><html lang=en><meta charset=utf-8><title>Not this bot's address</title>"
           "<p>This request names another host than this bot's. Open the bot at its own address "
           "(BOT_PUBLIC_URL, or the address it listens on).</p></html>")


class HostCheck:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or _probe(scope) or _allowed(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            refusal = HTMLResponse(REFUSED, status_code=421, headers={
                "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'",
                "X-Content-Type-Options": "nosniff"})
            await refusal(scope, receive, send)


def _probe(scope: Scope) -> bool:
    return scope["type"] == "http" and scope["path"] in PROBES and scope["method"] in ("GET", "HEAD")


def _allowed(scope: Scope) -> bool:
    """Against the settings the app was handed when it started (its lifespan sets them)."""
    hosts = Headers(scope=scope).getlist("host")
    return len(hosts) == 1 and host_allowed(scope["app"].state.settings, hosts[0], scope.get("server"))
