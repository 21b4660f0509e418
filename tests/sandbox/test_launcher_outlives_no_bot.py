"""A layer launcher (compiled, and the Python one) whose bot died ends its sandbox as a SIGTERM
from the bot would: nothing it started stays running, and what the sandbox wrote is still applied.
The bot may be killed (`bot run` or the service, SIGKILL) with a command running in a sandbox whose
own time limit was the bot's to enforce."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.layers import LAUNCHER as LAYER_MOUNT
from tests.leftovers import left_running

pytestmark = pytest.mark.sandbox
PARENT = "import subprocess, sys, time\nprint(subprocess.Popen(sys.argv[1:]).pid, flush=True)\ntime.sleep(600)\n"
COMMAND = ("import sys, time\nopen(sys.argv[1], 'w').write('made')\nprint('ready', flush=True)\n"
           "time.sleep(120)\n")


@pytest.fixture(params=["compiled", "python"])
def launcher_argv(request, compiled_launcher, tmp_path) -> list[str]:
    """A launcher over one layer, `work` (tmp_path/layer), running COMMAND (no bubblewrap: the
    command is the launcher's child as bubblewrap would be)."""
    scratch, layer = tmp_path / "scratch", tmp_path / "layer"
    scratch.mkdir(mode=0o700)
    layer.mkdir()
    folders = [str(scratch), "work", str(4 << 20), str(layer), "--", sys.executable, "-c", COMMAND,
               str(layer / "kept")]
    if request.param == "python":
        return [sys.executable, "-I", "-S", str(LAYER_MOUNT), *folders]
    assert compiled_launcher is not None, "no C compiler here: the compiled launcher cannot be tested"
    return [str(compiled_launcher), "--write-back", sys.executable, str(LAYER_MOUNT), "--nofile", "256",
            "--oom-first", *folders]


def kill_its_bot(argv: list[str]) -> None:
    """Start the launcher from a stand-in bot, and SIGKILL that bot once the command has written."""
    bot = subprocess.Popen([sys.executable, "-c", PARENT, *argv], stdout=subprocess.PIPE, text=True)
    assert bot.stdout is not None
    bot.stdout.readline()  # the launcher's pid: started
    assert bot.stdout.readline() == "ready\n"
    os.kill(bot.pid, signal.SIGKILL)
    bot.wait(timeout=60)
    bot.stdout.close()


def test_a_launcher_whose_bot_died_leaves_no_process(launcher_argv, tmp_path):
    kill_its_bot(launcher_argv)
    assert left_running(str(tmp_path)) == []


def test_a_launcher_whose_bot_died_still_applies_the_writes(launcher_argv, tmp_path):
    kill_its_bot(launcher_argv)
    left_running(str(tmp_path))
    assert (Path(tmp_path) / "layer" / "kept").read_text() == "made"
