"""The bridge's side of honest failure: it counts the CLI's tools/list requests, so a strict run
whose CLI never asked for the bot's tools can be reported as such (bot/episode/honesty.py)."""
from __future__ import annotations

from tests.bridge.conftest import mcp_session


async def test_bridge_counts_tools_list_requests(bridge):
    """No listing yet: 0; each tools/list a client sends: one more."""
    assert bridge.tools_listed == 0
    async with mcp_session(bridge.url, bridge.token) as session:
        await session.list_tools()
        await session.list_tools()
    assert bridge.tools_listed == 2

