"""The Host rule of the separate /metrics listener (BOT_METRICS_ADDR), the same rule as the main
app's (bot/web/host_check.py): a request names this listener or is answered 421. Prometheus scrapes
by address, so the allowlist is, at the listener's port: its configured host, an IP address (a DNS
name can be rebound to this machine, an address cannot be) or a loopback name. A page whose DNS name
was rebound to the machine sends its own name and reads nothing."""
from __future__ import annotations

import ipaddress
import logging
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from bot.settings.address import LOOPBACK, _split
from bot.web.host_check import REFUSED

log = logging.getLogger("bot.web.metrics_host")


def metrics_host_allowed(host: str, served: Sequence[object]) -> bool:
    """Whether `host` (a Host header) names the listener served at (configured host, port)."""
    named = _split(host, "http")
    if named is None or named[1] != int(str(served[1])):
        return False
    name = named[0]
    return name in LOOPBACK or name == str(served[0]).lower() or _is_address(name)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


class MetricsHostCheck:
    """Refuses, with 421, a request whose one Host header is not allowed; the refusal is logged."""

    def __init__(self, app: ASGIApp, configured_host: str):
        self.app, self.configured_host = app, configured_host

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = Headers(scope=scope).getlist("host")
        port = (scope.get("server") or ("", 0))[1] or 80
        if len(hosts) == 1 and metrics_host_allowed(hosts[0], (self.configured_host, port)):
            await self.app(scope, receive, send)
            return
        log.warning("metrics listener refused a request naming Host %r", hosts[:2])
        refusal = HTMLResponse(REFUSED, status_code=421, headers={
            "Cache-Control": "no-store", "Content-Security-Policy": "default-src 'none'",
            "X-Content-Type-Options": "nosniff"})
        await refusal(scope, receive, send)
