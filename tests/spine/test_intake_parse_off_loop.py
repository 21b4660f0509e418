"""What is live in a long comment is decided off the event loop: a crafted 64 KiB comment costs
the parser up to a second, while the same loop answers every other webhook."""
from __future__ import annotations

import asyncio
import threading

from bot.web import intake

COMMAND = "@bot codex explain this"


async def test_a_long_comments_command_is_found_while_the_loop_runs():
    ticked, waited = threading.Event(), []

    def parse_once_the_loop_ticked():
        waited.append(ticked.wait(30))  # a parse on the event loop holds it: no tick can come
        return "parsed"

    async def tick():
        await asyncio.sleep(0.01)
        ticked.set()

    ticker = asyncio.create_task(tick())
    body = COMMAND + "\n" + "| a | b |\n" * (intake.LONG_BODY // 8)
    assert await intake.off_loop_if_long(body, parse_once_the_loop_ticked) == "parsed"
    await ticker
    assert waited == [True]


async def test_a_short_comment_is_parsed_in_place():
    thread = []
    assert await intake.off_loop_if_long(COMMAND, lambda: thread.append(threading.current_thread()) or 1) == 1
    assert thread == [threading.main_thread()]
