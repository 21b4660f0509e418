"""A stand-in for the Codex CLI that floods its stdout at full speed, for the noisy-neighbour test
and bench: the first episode asked to flood (its prompt says so) after `arm()` floods until told to
stop; every other one answers at once.

    flood = Flood(tmp / "flood", kind="line")   # "line": one endless line; "lines": small JSON lines
    env = service_env(..., BOT_CODEX_BIN=str(flood.cli), BOT_SANDBOX_TIER="0")
    flood.arm()                 # the next episode floods
    flood.wait_flooding()       # it has written `flooding_after` bytes: the service is reading them
    flood.stop(); flood.wait_done()

The files it touches live in its folder: a sandbox tier that hides that folder cannot run it
(the tests run it under tier 0, where the service's own parsing is what is measured).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

_SCRIPT = '''#!{python}
import json, os, sys, time
folder = {folder!r}
if "--version" in sys.argv:
    print("codex-cli 0.171.0")
    sys.exit(0)
if "login" in sys.argv:
    sys.exit(1)
def say(text):
    print(json.dumps({{"type": "item.completed", "item": {{"type": "agent_message", "text": text}}}}), flush=True)
try:
    if b"flood" not in sys.stdin.buffer.read():
        raise FileNotFoundError
    os.rename(os.path.join(folder, "armed"), os.path.join(folder, "claimed"))
except FileNotFoundError:
    say("a quiet answer")
    sys.exit(0)
out, written, said, ends = sys.stdout.buffer, 0, False, time.monotonic() + {longest_s}
block = {block!r}
while not os.path.exists(os.path.join(folder, "stop")) and time.monotonic() < ends:
    out.write(block)
    written += len(block)
    if not said and written >= {flooding_after}:
        open(os.path.join(folder, "flooding"), "w").close()
        said = True
out.write(b"\\n")
out.flush()
say("the flood is over")
with open(os.path.join(folder, "done.tmp"), "w") as handle:
    handle.write(str(written))
os.replace(os.path.join(folder, "done.tmp"), os.path.join(folder, "done"))
'''

_BLOCKS = {"line": b"x" * 65536,
           "lines": b"".join(b'{"type":"turn.progress","n":%d}\n' % n for n in range(2048))}


class Flood:
    def __init__(self, folder: Path, kind: str = "line", flooding_after: int = 128 << 20,
                 longest_s: float = 600) -> None:
        self.folder, self.kind, self.flooding_after = folder, kind, flooding_after
        folder.mkdir(parents=True, exist_ok=True)
        self.cli = folder / "codex"
        self.cli.write_text(_SCRIPT.format(python=sys.executable, folder=str(folder), block=_BLOCKS[kind],
                                           flooding_after=flooding_after, longest_s=longest_s))
        self.cli.chmod(0o755)

    def arm(self) -> None:
        for name in ("claimed", "flooding", "stop", "done"):
            (self.folder / name).unlink(missing_ok=True)
        (self.folder / "armed").touch()

    def flooding(self) -> bool:
        return (self.folder / "flooding").exists()

    def done(self) -> bool:
        return (self.folder / "done").exists()

    def wait_flooding(self, deadline_s: float = 300) -> None:
        self._wait(self.flooding, deadline_s, f"the service did not read the flood's first {self.flooding_after} "
                   f"bytes within {deadline_s:.0f} s")

    def stop(self) -> None:
        (self.folder / "stop").touch()

    def wait_done(self, deadline_s: float = 120) -> None:
        self._wait(self.done, deadline_s, "the flood did not end")

    def _wait(self, predicate, deadline_s: float, failure: str) -> None:
        ends = time.monotonic() + deadline_s
        while not predicate():
            if time.monotonic() > ends:
                raise AssertionError(failure)
            time.sleep(0.05)
