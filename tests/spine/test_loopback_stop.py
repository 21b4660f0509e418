"""The per-episode servers' stop (bot/loopback.py) ends the requests still open by itself: the
client gets an answer and the log holds no "Exception in ASGI application" traceback."""
from __future__ import annotations

import asyncio
import logging

import httpx
import uvicorn

from bot.loopback import LoopbackServer


class Hanging:
    """An ASGI app whose every request waits forever (a model call in flight, a long tool call)."""

    def __init__(self, answer_first: bool = False):
        self.answer_first = answer_first
        self.asked = asyncio.Event()

    async def __call__(self, scope, receive, send) -> None:
        if self.answer_first:
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"partial", "more_body": True})
        self.asked.set()
        await asyncio.Event().wait()


async def _stopped_mid_request(app: Hanging) -> httpx.Response | BaseException:
    server = LoopbackServer(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off",
                                           timeout_graceful_shutdown=0.2, access_log=False), "test server")
    port = await server.start()
    async with httpx.AsyncClient(timeout=10) as client:
        request = asyncio.create_task(client.get(f"http://127.0.0.1:{port}/"))
        await app.asked.wait()
        await server.stop()
        return (await asyncio.gather(request, return_exceptions=True))[0]


async def test_a_request_open_at_the_stop_is_answered_503_without_a_traceback(caplog):
    caplog.set_level(logging.INFO)
    answer = await _stopped_mid_request(Hanging())
    assert isinstance(answer, httpx.Response) and answer.status_code == 503
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


async def test_an_answer_under_way_at_the_stop_is_ended_without_a_traceback(caplog):
    caplog.set_level(logging.INFO)
    answer = await _stopped_mid_request(Hanging(answer_first=True))
    assert isinstance(answer, httpx.Response) and answer.text == "partial"
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
