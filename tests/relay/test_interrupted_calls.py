"""A call still in flight when the relay stops (the CLI exits right after sending it, the episode
ends) has left for the provider, which may bill all of it: it is charged its hold and recorded as
interrupted, not `ok` with status 0 and released uncharged."""
from __future__ import annotations

import asyncio
import contextlib

from bot.relay.budgets import Ledger, Scope
from tests.relay.conftest import ANTHROPIC, model_calls, post


class _SilentProvider:
    """Reads a request, says so, and answers nothing until released."""

    def __init__(self) -> None:
        self.seen = asyncio.Event()
        self.release = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        self.seen.set()
        await self.release.wait()
        writer.close()


async def _cut_call(relay, recorder, **kwargs):
    provider = _SilentProvider()
    server = await asyncio.start_server(provider.serve, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server:
        async with relay("anthropic", base_url=base, ledger=Ledger(recorder.db), **kwargs) as r:
            cli = asyncio.create_task(post(r, *ANTHROPIC))
            await asyncio.wait_for(provider.seen.wait(), 30)
            cli.cancel()  # the CLI is gone; the relay stops with the call still open
            with contextlib.suppress(asyncio.CancelledError):
                await cli
        provider.release.set()
    return r


async def test_a_call_in_flight_when_the_relay_stops_is_charged_its_hold(relay, recorder, run_id):
    r = await _cut_call(relay, recorder, spend_scope=Scope(conversation="thread-1"))
    [call] = r.calls
    assert call.charged_max and call.usage == call.ceiling
    assert r.budget.turn.tokens == call.ceiling.total_tokens and r.budget.held_tokens == 0
    assert Ledger(recorder.db).spent(Scope(conversation="thread-1"))["thread"].tokens == call.ceiling.total_tokens


async def test_a_call_in_flight_when_the_relay_stops_is_recorded_interrupted_without_a_status(relay, recorder, run_id):
    await _cut_call(relay, recorder)
    [recorded] = model_calls(recorder, run_id)
    assert recorded["outcome"] == "interrupted" and recorded["detail"]["status"] is None
    assert recorded["detail"]["charged"] == "maximum"
