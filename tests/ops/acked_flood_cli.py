"""A stand-in for the Codex CLI that floods its stdout with small JSON lines and, every CALL_EVERY
lines, makes a bridged call (`read_file` of `ack-<n>.txt`, over the `mcp` SDK's client, as the
CLIs do); each answer it receives is written to `acked` (one number a line, flushed to disk) before
it goes on. That file is what the outside world was told: for the test that kills the service
mid-flood (tests/ops/test_record_kill_mid_flood_e2e.py).

    cli = AckedFlood(tmp / "cli")
    env = service_env(..., BOT_CODEX_BIN=str(cli.path), BOT_SANDBOX_TIER="0")
    cli.arm()                   # the next episode floods; any later one answers at once
    cli.wait_acked(20)          # 20 bridged calls answered
    cli.acked()                 # [1, 2, ...]

Run under tier 0: its folder is outside any sandbox.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

CALL_EVERY = 200

_SCRIPT = '''#!{python}
import asyncio, json, os, sys
folder = {folder!r}
if "--version" in sys.argv:
    print("codex-cli 0.171.0")
    sys.exit(0)
if "login" in sys.argv:
    sys.exit(1)

def say(text):
    print(json.dumps({{"type": "item.completed", "item": {{"type": "agent_message", "text": text}}}}), flush=True)

def config(name):
    for arg in sys.argv:
        key, _, value = arg.partition("=")
        if key.startswith("mcp_servers.") and key.endswith("." + name):
            return json.loads(value)

try:
    if b"flood" not in sys.stdin.buffer.read():
        raise FileNotFoundError
    os.rename(os.path.join(folder, "armed"), os.path.join(folder, "claimed"))
except FileNotFoundError:
    say("a quiet answer")
    sys.exit(0)

import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def flood():
    token = os.environ[config("bearer_token_env_var")]
    acked = open(os.path.join(folder, "acked"), "a")
    out, line, call = sys.stdout.buffer, 0, 0
    async with httpx2.AsyncClient(headers={{"Authorization": "Bearer " + token}}, timeout=60) as http:
        async with streamable_http_client(config("url"), http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                while not os.path.exists(os.path.join(folder, "stop")):
                    line += 1
                    out.write(b'{{"type":"turn.progress","n":%d}}\\n' % line)
                    if line % {call_every}:
                        continue
                    out.flush()
                    call += 1
                    await session.call_tool("read_file", {{"path": "ack-%d.txt" % call}})
                    acked.write("%d\\n" % call)
                    acked.flush()
                    os.fsync(acked.fileno())

try:
    asyncio.run(flood())
except BaseException:
    sys.exit(1)  # the bridge went away (the service was killed): nothing more is acknowledged
say("the flood is over")
'''


class AckedFlood:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "codex"
        self.path.write_text(_SCRIPT.format(python=sys.executable, folder=str(folder), call_every=CALL_EVERY))
        self.path.chmod(0o755)

    def arm(self) -> None:
        for name in ("claimed", "stop", "acked"):
            (self.folder / name).unlink(missing_ok=True)
        (self.folder / "armed").touch()

    def stop(self) -> None:
        (self.folder / "stop").touch()

    def acked(self) -> list[int]:
        path = self.folder / "acked"
        return [int(n) for n in path.read_text().split()] if path.exists() else []

    def wait_acked(self, count: int, deadline_s: float = 300) -> None:
        ends = time.monotonic() + deadline_s
        while len(self.acked()) < count:
            if time.monotonic() > ends:
                raise AssertionError(f"the flooding CLI had {len(self.acked())} of {count} calls answered "
                                     f"within {deadline_s:.0f} s")
            time.sleep(0.05)
