"""sandbox/bounded.py: a program's output and a file are read up to a cap, never whole; a program
that says more is stopped at the cap with everything it started, and the cut is reported."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.bounded import KILLED, NotRegularFile, read_capped, run_capped, run_capped_sync

# writes its stdin to stdout in the pieces its arguments name, flushing each
CHUNKED_ECHO = ("import os, sys\ndata, at = sys.stdin.buffer.read(), 0\n"
                "for size in map(int, sys.argv[1:]):\n    os.write(1, data[at:at + size]); at += size\n")
# floods stdout for ever, after starting a child that holds stderr open and would outlive it
FLOOD_WITH_CHILD = ("import os, subprocess, sys\n"
                    "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)'])\n"
                    "while True: os.write(1, b'x' * 65536)\n")

# starts a child in a session of its own (stopping the program's session does not reach it) that
# holds stdout and stderr open, says the child's pid, and ends; with "flood", the child floods stdout
LEAVES_A_DAEMON = ("import subprocess, sys\n"
                   "code = 'import os, sys, time\\nwhile sys.argv[1:]: os.write(1, b\"y\" * 65536)\\ntime.sleep(3600)'\n"
                   "child = subprocess.Popen([sys.executable, '-c', code, *sys.argv[1:]], start_new_session=True)\n"
                   "print(child.pid, flush=True)\n")

outputs = st.lists(st.binary(min_size=0, max_size=40_000), min_size=0, max_size=12)


def _echo(chunks: list[bytes], cap: int):
    return run_capped([sys.executable, "-c", CHUNKED_ECHO, *map(str, map(len, chunks))], cap=cap,
                      stdin=b"".join(chunks), timeout_s=60)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=outputs, cap=st.integers(min_value=0, max_value=200_000))
def test_a_program_output_is_never_read_past_its_cap_and_a_cut_is_reported_exactly_when_it_said_more(chunks, cap):
    said = b"".join(chunks)
    out = asyncio.run(_echo(chunks, cap))
    assert out.stdout == said[:cap]
    assert out.cut == (len(said) > cap)
    assert out.read <= cap + 1
    assert out.code == (KILLED if out.cut else 0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunks=outputs, cap=st.integers(min_value=0, max_value=200_000))
def test_the_blocking_reader_keeps_the_same_cap(chunks, cap, tmp_path_factory):
    said = b"".join(chunks)
    source = tmp_path_factory.mktemp("said") / "said"
    source.write_bytes(said)
    program = CHUNKED_ECHO.replace("sys.stdin.buffer.read()", f"open({str(source)!r}, 'rb').read()")
    out = run_capped_sync([sys.executable, "-c", program, *map(str, map(len, chunks))], cap=cap, timeout_s=60)
    assert (out.stdout, out.cut, out.read <= cap + 1) == (said[:cap], len(said) > cap, True)


def test_a_flood_is_stopped_at_the_cap_with_the_children_it_started():
    """The child holds stderr open: the call returns only once it is dead too."""
    out = asyncio.run(asyncio.wait_for(
        run_capped([sys.executable, "-c", FLOOD_WITH_CHILD], cap=100_000), 60))
    assert out.cut and len(out.stdout) == 100_000 and out.read == 100_001 and out.code == KILLED


def test_the_blocking_reader_stops_a_flood_with_its_children():
    out = run_capped_sync([sys.executable, "-c", FLOOD_WITH_CHILD], cap=100_000, timeout_s=60)
    assert out.cut and not out.timed_out and len(out.stdout) == 100_000


@pytest.fixture
def daemons():
    """The pids of what a test's program left running in sessions of their own, killed after."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_daemon_left_holding_the_pipes_does_not_hold_the_call_once_the_program_ended(daemons):
    out = asyncio.run(asyncio.wait_for(run_capped([sys.executable, "-c", LEAVES_A_DAEMON], cap=1000), 60))
    daemons.append(int(out.stdout))
    assert (out.code, out.cut, out.timed_out) == (0, False, False)


def test_the_blocking_reader_returns_once_the_program_ended_though_a_daemon_holds_the_pipes(daemons):
    out = run_capped_sync([sys.executable, "-c", LEAVES_A_DAEMON], cap=1000, timeout_s=60)
    daemons.append(int(out.stdout))
    assert (out.code, out.cut, out.timed_out) == (0, False, False)


def test_a_flood_from_a_daemon_is_cut_and_the_call_returns(daemons):
    """Past the cap nothing reads stdout: its buffer fills and the reading pauses for good, the case
    where waiting for asyncio's own pipes to close never ended."""
    out = asyncio.run(asyncio.wait_for(
        run_capped([sys.executable, "-c", LEAVES_A_DAEMON, "flood"], cap=64), 60))
    daemons.append(int(out.stdout.split(b"\n")[0]))
    assert out.cut and len(out.stdout) == 64


def test_a_program_past_its_time_limit_is_stopped_and_says_so():
    out = asyncio.run(run_capped([sys.executable, "-c", "import time; print('a', flush=True); time.sleep(3600)"],
                                 cap=1000, timeout_s=1))
    assert out.timed_out and not out.cut and out.stdout == b"a\n" and out.code == KILLED


def test_stderr_keeps_only_its_tail():
    out = asyncio.run(run_capped([sys.executable, "-c", "import os; os.write(2, b'a' * 200000 + b'END')"],
                                 cap=10))
    assert out.stderr.endswith(b"END") and len(out.stderr) == 64 << 10 and out.code == 0


def test_a_file_is_read_up_to_its_cap_and_says_it_holds_more(tmp_path):
    (tmp_path / "big").write_bytes(b"y" * 5000)
    assert read_capped(tmp_path / "big", 4096) == (b"y" * 4096, True)
    assert read_capped(tmp_path / "big", 5000) == (b"y" * 5000, False)


def test_a_file_read_never_follows_a_symlink(tmp_path):
    (tmp_path / "target").write_text("secret")
    (tmp_path / "link").symlink_to(tmp_path / "target")
    with pytest.raises(OSError):
        read_capped(tmp_path / "link", 100)


def test_a_fifo_is_refused_without_blocking(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotRegularFile):
        read_capped(tmp_path / "fifo", 100)


def test_a_file_is_read_relative_to_an_open_folder(tmp_path: Path):
    (tmp_path / "a").write_text("hello")
    folder = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert read_capped("a", 3, dir_fd=folder) == (b"hel", True)
    finally:
        os.close(folder)


def test_a_program_that_cannot_start_leaves_no_descriptor_open(tmp_path):
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        asyncio.run(run_capped([str(tmp_path / "no-such-program")], cap=10, stdin=b"x"))
    assert len(os.listdir("/proc/self/fd")) == before
