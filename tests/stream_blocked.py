"""When a CLI's writer is held by its own pipe: the bot's stream has stopped reading the pipe and
the pipe is full. Nothing moves until the bot reads, so what the stream holds then is final (a
count that held still for a while proves nothing: a CLI at the lower priority may get no CPU for a
second on a loaded machine)."""
from __future__ import annotations

import array
import asyncio
import fcntl
import termios


def writer_held(stream: asyncio.StreamReader) -> bool:
    transport = stream._transport  # type: ignore[attr-defined]  # asyncio names it no other way
    pipe = transport.get_extra_info("pipe")
    waiting = array.array("i", [0])
    fcntl.ioctl(pipe.fileno(), termios.FIONREAD, waiting, True)
    return transport.is_reading() is False and waiting[0] == fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ)


async def until_writer_held(stream: asyncio.StreamReader, within_s: float = 60) -> None:
    async with asyncio.timeout(within_s):
        while not writer_held(stream):
            await asyncio.sleep(0.05)
