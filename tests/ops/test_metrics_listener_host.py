"""The separate /metrics listener (BOT_METRICS_ADDR) answers only requests that name it as their
Host: its own address, an IP address (no DNS name can be rebound to it) or a loopback name, at its
port. A web page whose DNS name was rebound to this machine reads nothing there."""
from __future__ import annotations

import httpx

from bot.service import store
from bot.web.health import metrics_app
from bot.web.metrics_host import metrics_host_allowed
from tests.entry_settings import current


async def scraped(host: str, address: tuple[str, int] = ("127.0.0.1", 9464)) -> int:
    app = metrics_app(store.connect(settings=current()), address)
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 5000))
    async with httpx.AsyncClient(transport=transport, base_url=f"http://{address[0]}:{address[1]}") as client:
        return (await client.get("/metrics", headers={"host": host})).status_code


async def test_a_rebound_dns_name_is_refused_by_the_metrics_listener():
    assert await scraped("attacker.example:9464") == 421


async def test_the_listeners_own_address_is_served():
    assert await scraped("127.0.0.1:9464") == 200


def test_the_metrics_host_rule_takes_addresses_and_loopback_names_at_the_listeners_port_only():
    served = ("0.0.0.0", 9464)
    assert metrics_host_allowed("10.1.2.3:9464", served) and metrics_host_allowed("[::1]:9464", served)
    assert metrics_host_allowed("localhost:9464", served)
    assert not metrics_host_allowed("10.1.2.3:80", served) and not metrics_host_allowed("localhost", served)
    assert not metrics_host_allowed("localhost.attacker.example:9464", served)
    assert not metrics_host_allowed("metrics.internal:9464", served)
    assert metrics_host_allowed("metrics.internal:9464", ("metrics.internal", 9464))
