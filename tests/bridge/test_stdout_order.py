"""A bridged call is recorded after every line the CLI printed before it, while the reader of its
stdout lags behind (paced): the bridge waits for the reader to reach what the CLI had written when
the call arrived (bot/bridge/stdout_mark.py), for a bounded time, and says so in the call's event
when it gave up."""
from __future__ import annotations

import asyncio
import json
import os
import sys

from adapters.base import Episode, Invocation
from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.bridge.stdout_mark import StdoutMark
from bot.episode.pace import LinePace
from bot.episode.runner import run_episode
from sandbox.base import Limits, SandboxConfig
from sandbox.tier0 import Tier0Spawner
from sandbox.tier1 import Tier1Spawner
from tests.adapters.test_runner import ScriptAdapter, _setup
from tests.entry_settings import current
from tests.stream_blocked import until_writer_held

LINES = 3000  # printed before each call: far more than the paced reader takes before the call comes

_CLI = '''
import asyncio, json, os, sys
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

def say(*names):
    for name in names:
        sys.stdout.write(json.dumps({"text": name}) + "\\n")
    sys.stdout.flush()

async def main():
    headers = {"Authorization": "Bearer " + os.environ["TEST_BRIDGE_TOKEN"]}
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        async with streamable_http_client(os.environ["TEST_BRIDGE_URL"], http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                BODY
asyncio.run(main())
'''


class BridgedScript(ScriptAdapter):
    """A Python "CLI" that reaches the bridge with the `mcp` SDK's client, as the real CLIs do."""

    def __init__(self, body: str, bridge: BridgeServer):
        super().__init__(_CLI.replace("BODY", body))
        self.bridge = bridge

    def command(self, episode: Episode) -> Invocation:
        return Invocation(argv=[sys.executable, "-c", self.script],
                          env={"TEST_BRIDGE_URL": self.bridge.url, "TEST_BRIDGE_TOKEN": self.bridge.token})


async def run_bridged(body: str, bridge: BridgeServer, tmp_path, pace: LinePace) -> list[dict]:
    episode, config = _setup(tmp_path)
    result = await run_episode(BridgedScript(body, bridge), episode, Tier0Spawner(), config,
                               on_event=lambda event: bridge.recorder.attest(bridge.run_id, event),
                               pace=pace, mark=bridge.stdout)
    assert result.exit_code == 0, result.stderr_tail
    return bridge.recorder.events(bridge.run_id)


def order(events: list[dict]) -> list[str]:
    """The record as names: a line's text, or the path of a call."""
    return [json.loads(e["raw"])["path"] if e["kind"] == "tool_call" else json.loads(e["raw"])["text"]
            for e in events]


async def test_a_call_is_recorded_after_every_line_printed_before_it(worktree, recorder, run_id, tmp_path):
    body = ("for r in range(3):\n"
            f"                    say(*(f'line-{{r}}-{{n}}' for n in range({LINES})))\n"
            "                    await session.call_tool('read_file', {'path': f'call-{r}.txt'})")
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s") as bridge:
        events = await run_bridged(body, bridge, tmp_path, LinePace(per_second=20_000))
    expected = [name for r in range(3) for name in [*(f"line-{r}-{n}" for n in range(LINES)), f"call-{r}.txt"]]
    assert order(events) == expected
    assert all("stdout_unread_bytes" not in e["raw"] for e in events if e["kind"] == "tool_call")


async def test_calls_at_once_are_each_recorded_after_the_lines_printed_before_them(worktree, recorder, run_id,
                                                                                    tmp_path):
    body = (f"say(*(f'first-{{n}}' for n in range({LINES})))\n"
            "                early = asyncio.create_task(session.call_tool('read_file', {'path': 'early.txt'}))\n"
            "                await asyncio.sleep(0.05)\n"
            f"                say(*(f'second-{{n}}' for n in range({LINES})))\n"
            "                await asyncio.gather(early, session.call_tool('read_file', {'path': 'late.txt'}))")
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s") as bridge:
        names = order(await run_bridged(body, bridge, tmp_path, LinePace(per_second=20_000)))
    assert names.index("early.txt") > names.index(f"first-{LINES - 1}")
    assert names.index("late.txt") > names.index(f"second-{LINES - 1}")
    assert [n for n in names if not n.endswith(".txt")] == [
        *(f"first-{n}" for n in range(LINES)), *(f"second-{n}" for n in range(LINES))]


async def piped(data: bytes) -> tuple[asyncio.StreamReader, int]:
    """A stream over a real pipe holding `data`, nothing reading it: (the stream, the write end)."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)
    stream = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream),
                                                       os.fdopen(read_end, "rb", buffering=0))
    return stream, write_end


async def test_written_counts_what_waits_in_the_pipe_and_in_the_stream(tmp_path):
    data = b"".join(b'{"text": "%d"}\n' % n for n in range(2000))
    stream, write_end = await piped(data)
    mark = StdoutMark()
    mark.attach(stream)
    try:
        assert mark.written() == len(data)
        await asyncio.sleep(0.01)  # the transport moves what the pipe held into the stream's buffer
        chunk = await stream.read(1000)
        mark.took(len(chunk))
        assert mark.written() == len(data)
        os.write(write_end, b"more\n")
        assert mark.written() == len(data) + 5
    finally:
        os.close(write_end)


async def test_a_call_waits_a_bounded_time_for_a_reader_that_never_reads(worktree, recorder, run_id, tmp_path):
    stream, write_end = await piped(b"x" * 4096 + b"\n")
    try:
        async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                                catch_up_s=0.2) as bridge:
            bridge.stdout.attach(stream)
            text, is_error = await bridge.call_tool("read_file", {"path": "app.py"})
    finally:
        os.close(write_end)
    [call] = [e for e in recorder.events(run_id) if e["kind"] == "tool_call"]
    assert (is_error, json.loads(call["raw"])["stdout_unread_bytes"]) == (False, 4097)
    assert "def add" in text


async def test_a_call_does_not_wait_for_a_reader_that_has_ended(worktree, recorder, run_id, tmp_path):
    stream, write_end = await piped(b"x" * 4096 + b"\n")
    try:
        async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                                catch_up_s=600) as bridge:
            bridge.stdout.attach(stream)
            bridge.stdout.end()
            await bridge.call_tool("read_file", {"path": "app.py"})
    finally:
        os.close(write_end)
    [call] = [e for e in recorder.events(run_id) if e["kind"] == "tool_call"]
    assert "stdout_unread_bytes" not in json.loads(call["raw"])


async def test_waiting_calls_are_released_in_the_order_the_reader_reaches_them():
    mark = StdoutMark()
    near, far = (asyncio.create_task(mark.reached(target, 600)) for target in (10, 20))
    await asyncio.sleep(0)
    mark.advance(15)
    await asyncio.sleep(0)
    assert (near.done(), far.done()) == (True, False)
    mark.advance(20)
    assert (await near, await far) == (0, 0)


async def test_a_stopped_reader_releases_every_waiting_call():
    mark = StdoutMark()
    waiting = [asyncio.create_task(mark.reached(target, 600)) for target in (10, 20)]
    await asyncio.sleep(0)
    mark.end()
    assert await asyncio.gather(*waiting) == [0, 0]


async def test_written_counts_what_a_tier1_sandbox_printed_and_nobody_read(tmp_path):
    """Tier 1's CLI writes into the very pipe the runner reads (bubblewrap and the layer launcher
    pass it through). It prints more than the stream's buffer and the pipe hold, nothing reading,
    until its writes block; what the mark then counts is what the stream yields to its end."""
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    config = SandboxConfig(workdir=work, home=home, limits=Limits(timeout_s=60, memory_bytes=256 << 20, pids=64))
    printed = 40 << 20  # past the stream's buffer (it stops taking at twice the sandbox's stream limit)
    proc = await Tier1Spawner(host=current().sandbox_host).start(
        config, ["sh", "-c", f"head -c {printed} /dev/zero; sleep 60"], {})
    mark = StdoutMark()
    mark.attach(proc.stdout)
    try:
        await until_writer_held(proc.stdout)  # its writes block: the stream paused, its pipe full
        seen = mark.written()
        await proc.kill()
        # every process of the sandbox gone (its cgroups removed): a writer killed while blocked on the
        # full pipe, woken by the read below before it died, would otherwise put one more page in
        await proc.cleaned_up()
        assert len(await proc.stdout.read()) == seen < printed
    finally:
        await proc.kill()
        await proc.wait()
