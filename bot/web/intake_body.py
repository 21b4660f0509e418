"""What an unauthenticated sender can hold of `POST /webhook` before its signature is checked:
one of BOT_WEBHOOK_CONCURRENCY slots, for at most BOT_WEBHOOK_BODY_TIMEOUT seconds, and at most
MAX_BODY_BYTES of body (refused before reading it all when the length is declared).

    slots = BodySlots.of(request.app.state)
    if not slots.free():  -> 503 with Retry-After
    with slots.taken():
        body = await read_body(request, headers, timeout_s)   # raises TooLarge, TooSlow, Gone
"""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from starlette.requests import ClientDisconnect, Request

from bot.errors import BotError

MAX_BODY_BYTES = 25 * 1024 * 1024
RETRY_AFTER_S = 5


class TooLarge(BotError):
    """The body is (or says it is) over MAX_BODY_BYTES."""


class TooSlow(BotError):
    """The body did not arrive in full within BOT_WEBHOOK_BODY_TIMEOUT."""


class Gone(BotError):
    """The sender hung up before the body was complete."""


class BodySlots:
    """Bodies being read by this process (one event loop: a plain counter is exact), at most
    `limit` (BOT_WEBHOOK_CONCURRENCY) at once."""

    def __init__(self, limit: int) -> None:
        self.reading, self.limit = 0, limit

    @classmethod
    def of(cls, state: Any) -> BodySlots:
        slots = getattr(state, "webhook_body_slots", None)
        if slots is None:
            slots = cls(state.settings.whole("BOT_WEBHOOK_CONCURRENCY"))
            state.webhook_body_slots = slots
        return slots

    def free(self) -> bool:
        return self.reading < self.limit

    @contextmanager
    def taken(self) -> Iterator[None]:
        self.reading += 1
        try:
            yield
        finally:
            self.reading -= 1


async def read_body(request: Request, headers: dict[str, str], timeout_s: float) -> bytes:
    """The whole body, within `timeout_s` (BOT_WEBHOOK_BODY_TIMEOUT) and MAX_BODY_BYTES."""
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise TooLarge
    try:
        async with asyncio.timeout(timeout_s):
            return await _capped(request)
    except TimeoutError:
        raise TooSlow from None
    except ClientDisconnect:
        raise Gone from None


async def _capped(request: Request) -> bytes:
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)
