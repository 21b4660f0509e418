"""The compiled capped-layer launcher (sandbox/native/layer_launcher.c), run directly and under tier 1.

Each guarantee it could be tempted to skip has its own test: the argument allowlist, the caps joined
before the command runs (memory, pids, the v2 cgroup, the OOM order, descriptors, core dumps), a
full layer stopping the command, SIGTERM still applying the writes, the report, the exit status,
and a write-back that cannot start being reported as unkept. The escape suites
(tests/sandbox/test_escape_*.py) run every sandbox on it too.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox import launcher, limits
from sandbox import process as process_module
from sandbox.base import Limits
from sandbox.cgroup_set import v2_mount
from sandbox.layers import LAUNCHER as LAYER_MOUNT
from sandbox.layers import Layers
from sandbox.own_cgroup import ContainerCgroup
from sandbox.tier1 import Tier1Spawner
from tests.conftest import is_root
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox
MIB = 1 << 20
USAGE = launcher.USAGE_EXIT
WRITE_BACK = ["--write-back", sys.executable, str(LAYER_MOUNT)]


@pytest.fixture(scope="module")
def compiled() -> Path:
    built = launcher.find()
    assert built is not None, "no C compiler here: the compiled launcher cannot be tested"
    return built


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path]:
    """SCRATCH (the bot's private folder for the launcher) and a layer's host folder."""
    scratch, layer = tmp_path / "scratch", tmp_path / "layer"
    scratch.mkdir(mode=0o700)
    layer.mkdir()
    return scratch, layer


def _run(compiled: Path, args: list[str], timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(compiled), *args], capture_output=True, text=True, timeout=timeout)


def _direct(compiled: Path, scratch: Path, layer: Path, script: str, *, size: int = 4 * MIB,
            caps: tuple[str, ...] = ("--oom-first",), write_back: list[str] = WRITE_BACK) -> subprocess.CompletedProcess:
    """The launcher over one layer named `work`, running `sh -c script` (no bubblewrap: the command
    is the launcher's child as bubblewrap would be)."""
    return _run(compiled, [*write_back, "--nofile", "256", *caps, str(scratch), "work", str(size), str(layer),
                           "--", "/bin/sh", "-c", script])


def _report(scratch: Path) -> str:
    return (scratch / "report").read_text()


# ---- the argument allowlist ----

SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-é ",
                  min_size=1, max_size=12).filter(lambda s: s not in (".", ".."))
PATH = st.lists(SEGMENT, min_size=1, max_size=5).map(lambda parts: "/" + "/".join(parts))
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=32)
CAPS = st.sampled_from([["--oom-first"], ["--cgroup-v2", "/sys/fs/cgroup/x"],
                        ["--cgroup-v1", "/m/x", "--cgroup-v1", "/p/x", "--track-v2", "/u/x"]])


@st.composite
def valid_argv(draw) -> list[str]:
    names = draw(st.lists(NAME, max_size=3, unique=True))
    layers = [value for name in names
              for value in (name, str(draw(st.integers(0, 1 << 50))), draw(PATH))]
    fds = draw(st.lists(st.integers(3, 65535), min_size=2, max_size=2, unique=True))
    done = draw(st.sampled_from([[], ["--done-fd", str(fds[0])], ["--done-fd", str(fds[0]), "--apply-fd", str(fds[1])]]))
    return [*WRITE_BACK, "--nofile", str(draw(st.integers(1, 1 << 30))), *draw(CAPS), *done, draw(PATH), *layers,
            "--", draw(PATH), *draw(st.lists(st.text(max_size=8).filter(lambda s: "\0" not in s), max_size=3))]


def _layer_at(argv: list[str]) -> int:
    """Where SCRATCH is."""
    at = argv.index("--nofile") + 2
    while argv[at].startswith("--"):
        at += 2 if argv[at] != "--oom-first" else 1
    return at


MUTATIONS = {
    "relative scratch": lambda a, at: a[:at] + [a[at].lstrip("/")] + a[at + 1:],
    "comma in scratch": lambda a, at: a[:at] + [a[at] + ",upperdir=/"] + a[at + 1:],
    "colon in scratch": lambda a, at: a[:at] + [a[at] + ":/etc"] + a[at + 1:],
    "backslash in scratch": lambda a, at: a[:at] + [a[at] + "\\,x"] + a[at + 1:],
    "newline in scratch": lambda a, at: a[:at] + [a[at] + "\nx"] + a[at + 1:],
    "dot-dot in scratch": lambda a, at: a[:at] + [a[at] + "/../x"] + a[at + 1:],
    "empty component in scratch": lambda a, at: a[:at] + [a[at] + "//x"] + a[at + 1:],
    "trailing slash in scratch": lambda a, at: a[:at] + [a[at] + "/"] + a[at + 1:],
    "layer with a comma in its path": lambda a, at: a[:at + 1] + ["home", "5", "/h,lowerdir=/"] + a[at + 1:],
    "layer with a relative path": lambda a, at: a[:at + 1] + ["home", "5", "h"] + a[at + 1:],
    "layer size negative": lambda a, at: a[:at + 1] + ["home", "-5", "/h"] + a[at + 1:],
    "layer size in hex": lambda a, at: a[:at + 1] + ["home", "0x10", "/h"] + a[at + 1:],
    "layer size past the bound": lambda a, at: a[:at + 1] + ["home", str((1 << 50) + 1), "/h"] + a[at + 1:],
    "layer size of twenty digits": lambda a, at: a[:at + 1] + ["home", "9" * 20, "/h"] + a[at + 1:],
    "layer name with a tab": lambda a, at: a[:at + 1] + ["ho\tme", "5", "/h"] + a[at + 1:],
    "layer name in capitals": lambda a, at: a[:at + 1] + ["HOME", "5", "/h"] + a[at + 1:],
    "layer name too long": lambda a, at: a[:at + 1] + ["a" * 33, "5", "/h"] + a[at + 1:],
    "layer named twice": lambda a, at: a[:at + 1] + ["twice", "5", "/h", "twice", "5", "/h"] + a[at + 1:],
    "layer cut short": lambda a, at: a[:a.index("--", at)] + ["home", "5"] + a[a.index("--", at):],
    "nine layers": lambda a, at: a[:at + 1] + [v for i in range(9) for v in (f"l{i}", "5", "/h")] + a[at + 1:],
    "no command": lambda a, at: a[:a.index("--", at) + 1],
    "no --": lambda a, at: a[:a.index("--", at)],
    "relative command": lambda a, at: a[:a.index("--", at) + 1] + ["true"],
    "unknown option": lambda a, at: ["--verbose", *a],
    "nofile twice": lambda a, at: ["--nofile", "5", *a],
    "nofile zero": lambda a, at: [v if i != a.index("--nofile") + 1 else "0" for i, v in enumerate(a)],
    "nofile a word": lambda a, at: [v if i != a.index("--nofile") + 1 else "many" for i, v in enumerate(a)],
    "write-back twice": lambda a, at: [*WRITE_BACK, *a],
    "write-back relative": lambda a, at: ["--write-back", "python3", "x.py", *a[3:]],
    "no write-back": lambda a, at: a[3:],
    "no nofile": lambda a, at: a[:3] + a[5:],
    "no cap to join": lambda a, at: a[:5] + a[at:],
    "v2 cgroup and v2 tracking": lambda a, at: ["--cgroup-v2", "/a", "--track-v2", "/b", *a[:5], *a[at:]],
    "five v1 cgroups": lambda a, at: [v for i in range(5) for v in ("--cgroup-v1", f"/c{i}")] + a,
    "relative cgroup": lambda a, at: ["--cgroup-v1", "memory/x", *a],
    "done-fd twice": lambda a, at: ["--done-fd", "7", "--done-fd", "8", *a],
    "done-fd on stdout": lambda a, at: ["--done-fd", "1", *a],
    "done-fd a word": lambda a, at: ["--done-fd", "pipe", *a],
    "done-fd negative": lambda a, at: ["--done-fd", "-4", *a],
    "done-fd past the bound": lambda a, at: ["--done-fd", "65536", *a],
    "apply-fd alone or twice": lambda a, at: ["--apply-fd", "9", *[v for v in a if v != "--done-fd"]]
    if "--done-fd" not in a else ["--apply-fd", "9", "--apply-fd", "10", *a],
    "apply-fd is done-fd": lambda a, at: ["--done-fd", "9", "--apply-fd", "9", *a] if "--done-fd" not in a
    else ["--apply-fd", a[a.index("--done-fd") + 1], *a],
}


@settings(max_examples=60, deadline=None)
@given(valid_argv())
def test_the_launcher_accepts_what_its_grammar_allows(argv):
    built = launcher.find()
    assert built is not None
    done = _run(built, ["--check", *argv])
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_argv(), st.sampled_from(sorted(MUTATIONS)))
def test_the_launcher_refuses_anything_outside_its_grammar_and_says_what(argv, mutation):
    built = launcher.find()
    assert built is not None
    mutated = MUTATIONS[mutation](argv, _layer_at(argv))
    done = _run(built, ["--check", *mutated])
    assert done.returncode == USAGE, (mutation, mutated, done.stdout)
    assert done.stderr.startswith("bot-sandbox: the layer launcher refuses its arguments: "), done.stderr


def test_arguments_refused_run_nothing_and_mount_nothing(compiled, folders):
    scratch, layer = folders
    done = _run(compiled, [*WRITE_BACK, "--nofile", "256", "--oom-first", str(scratch), "work", "4096",
                           str(layer) + ",x", "--", "/bin/sh", "-c", f"touch {layer}/ran"])
    assert done.returncode == USAGE
    assert list(layer.iterdir()) == [] and list(scratch.iterdir()) == []


@pytest.mark.parametrize("kind", ["v1", "v2", "container"])
def test_the_argv_the_bot_builds_is_one_the_launcher_accepts(compiled, tmp_path, kind):
    groups = {"v1": limits.CgroupSet(1, Path("/sys/fs/cgroup/memory/b/r"), Path("/sys/fs/cgroup/pids/b/r"),
                                     leaf_v2=Path("/sys/fs/cgroup/unified/b/r")),
              "v2": limits.CgroupSet(2, Path("/sys/fs/cgroup/b/r"), Path("/sys/fs/cgroup/b/r"),
                                     Path("/sys/fs/cgroup/b/r")),
              "container": ContainerCgroup(2, Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup"))}[kind]
    capped = Layers([{"name": "home", "path": str(tmp_path / "h"), "size": 0},
                     {"name": "worktree", "path": str(tmp_path / "w"), "size": 1 << 30}],
                    scratch=tmp_path / "s", compiled=compiled)
    argv = capped.prefix(groups, 4096)
    done = _run(compiled, ["--check", *argv[1:], "/usr/bin/bwrap", "--ro-bind", "/", "/"])
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr


# ---- caps joined before the command runs ----

@pytest.fixture
def run_cgroups():
    """The run's cgroups as the bot makes them (sandbox/limits.py), removed afterwards."""
    made = []

    def make(memory: int = 256 * MIB, pids: int = 64) -> limits.CgroupSet:
        groups = limits.create("launcher-" + secrets.token_hex(4), memory, pids, current().sandbox_host)
        made.append(groups)
        return groups

    yield make
    for groups in made:
        groups.remove()


def _expected_cgroups(groups: limits.CgroupSet) -> dict[str, str]:
    """controller ('' for v2) -> the path /proc/self/cgroup shows for a process in `groups`."""
    root = current().sandbox_host.cgroup_root
    unified = v2_mount(root)
    if groups.version == 2:
        return {"": "/" + str(groups.memory.relative_to(unified))}
    expected = {"memory": "/" + str(groups.memory.relative_to(root / "memory")),
                "pids": "/" + str(groups.pids.relative_to(root / "pids"))}
    if groups.leaf_v2 is not None:
        expected[""] = "/" + str(groups.leaf_v2.relative_to(unified))
    return expected


def test_the_command_starts_in_every_cgroup_of_the_run(compiled, folders, run_cgroups):
    groups = run_cgroups()
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "cat /proc/self/cgroup", caps=tuple(groups.launcher_args()))
    assert done.returncode == 0, done.stderr
    seen = {name: path for line in done.stdout.splitlines()
            for _, names, path in [line.split(":", 2)] for name in names.split(",")}
    assert {name: seen.get(name) for name in _expected_cgroups(groups)} == _expected_cgroups(groups)


def test_the_memory_cap_kills_an_allocation_past_it(compiled, folders, run_cgroups):
    groups = run_cgroups(memory=64 * MIB)
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, 'python3 -c "b = bytearray(256 << 20)"; echo "alloc=$?"',
                   caps=tuple(groups.launcher_args()))
    assert "alloc=137" in done.stdout, done.stderr
    assert groups.oom_kills() >= 1


def test_the_pids_cap_refuses_a_fork_past_it(compiled, folders, run_cgroups):
    groups = run_cgroups(pids=8)
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 2 & done; wait",
                   caps=tuple(groups.launcher_args()))
    assert "fork" in done.stderr.lower() or "resource" in done.stderr.lower(), done.stderr
    assert groups.pids_max_hits() >= 1


def test_a_cgroup_that_cannot_be_joined_ends_the_start_before_the_command_runs(compiled, folders, tmp_path):
    scratch, layer = folders
    missing = tmp_path / "no-such-cgroup"
    done = _direct(compiled, scratch, layer, f"touch {tmp_path}/ran", caps=("--cgroup-v1", str(missing)))
    assert done.returncode == limits.JOIN_FAILED_EXIT
    assert done.stderr.startswith(f"bot-sandbox: cannot join cgroup {missing}/tasks: "), done.stderr
    assert not (tmp_path / "ran").exists()


def test_a_v2_cgroup_that_cannot_be_joined_ends_the_start_before_the_command_runs(compiled, folders, tmp_path):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, f"touch {tmp_path}/ran", caps=("--cgroup-v2", str(tmp_path / "none")))
    assert done.returncode == limits.JOIN_FAILED_EXIT, done.stderr
    assert not (tmp_path / "ran").exists()


def test_a_tracking_cgroup_that_cannot_be_joined_is_left_out(compiled, folders, tmp_path):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "echo ran", caps=("--oom-first", "--track-v2", str(tmp_path / "none")))
    assert (done.returncode, done.stdout) == (0, "ran\n"), done.stderr


def test_the_command_is_the_first_an_oom_kill_takes(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "cat /proc/self/oom_score_adj")
    assert done.stdout == "1000\n", done.stderr


def test_the_command_gets_the_descriptor_limit_and_no_core_dumps(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "ulimit -Sn; ulimit -Hn; ulimit -c")
    assert done.stdout.split() == ["256", "256", "0"], done.stderr


def test_the_command_holds_none_of_the_launchers_own_descriptors(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "ls /proc/self/fd")
    assert sorted(int(fd) for fd in done.stdout.split()) == [0, 1, 2, 3], done.stdout  # 3: ls's own listing


# ---- the layers, the report, the write-back, the status ----

def test_a_layer_kept_full_stops_the_command_and_is_reported_full(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, f"cat /dev/zero > {layer}/big; echo cap-reached; exec sleep 60",
                   size=2 * MIB)
    assert done.returncode == -signal.SIGKILL
    assert done.stdout == "cap-reached\n"
    name, size, full, applied, _, _ = _report(scratch).split("\t")
    assert (name, size, full) == ("work", str(2 * MIB), "1")


def test_a_command_that_wrote_nothing_gets_its_report_from_the_launcher(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, "true", size=0)
    assert done.returncode == 0, done.stderr
    assert _report(scratch) == "work\t4096\t0\t1\t\t\n"


def test_the_report_of_nothing_written_is_the_one_the_python_launcher_writes(compiled, folders, tmp_path):
    scratch, layer = folders
    _direct(compiled, scratch, layer, "true", size=3 * MIB)
    other = tmp_path / "python-scratch"
    other.mkdir()
    subprocess.run([sys.executable, "-I", "-S", str(LAYER_MOUNT), str(other), "work", str(3 * MIB), str(layer),
                    "--", "/bin/true"], check=True, timeout=60)
    assert _report(scratch) == _report(other)


def test_what_the_command_wrote_is_applied_and_reported(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, f"echo made > {layer}/f && mkfifo {layer}/pipe")
    assert done.returncode == 0, done.stderr
    assert (layer / "f").read_text() == "made\n" and not (layer / "pipe").exists()
    assert _report(scratch) == f"work\t{4 * MIB}\t0\t1\t\tfifo=1\n"


def test_sigterm_to_the_launcher_stops_the_command_and_still_applies_its_writes(compiled, folders):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, f"echo made > {layer}/kept && kill -TERM $PPID && exec sleep 60")
    assert done.returncode == -signal.SIGKILL  # the launcher dies as its command died
    assert (layer / "kept").read_text() == "made\n"
    assert _report(scratch).split("\t")[3] == "1"


def test_sigterm_during_the_write_back_leaves_it_going(compiled, folders, tmp_path):
    """The bot's time limit may fall while the layers are applied: the write-back is not stopped."""
    scratch, layer = folders
    script = tmp_path / "write_back.py"
    script.write_text("import os, runpy, signal, sys\n"
                      "os.kill(os.getpid(), signal.SIGTERM)\n"
                      f"sys.argv[0] = {str(LAYER_MOUNT)!r}\n"
                      f"runpy.run_path({str(LAYER_MOUNT)!r}, run_name='__main__')\n")
    done = _direct(compiled, scratch, layer, f"echo made > {layer}/kept",
                   write_back=["--write-back", sys.executable, str(script)])
    assert done.returncode == 0, done.stderr
    assert (layer / "kept").read_text() == "made\n"


def test_a_write_back_interpreter_that_cannot_be_opened_refuses_the_start_before_anything_runs(compiled, folders,
                                                                                              tmp_path):
    scratch, layer = folders
    done = _direct(compiled, scratch, layer, f"touch {tmp_path}/ran",
                   write_back=["--write-back", str(tmp_path / "no-python"), str(LAYER_MOUNT)])
    assert done.returncode == 72
    assert "cannot cap the sandbox's writable folders: open the write-back's interpreter" in done.stderr
    assert not (tmp_path / "ran").exists()


def test_a_write_back_that_cannot_start_is_reported_unkept(compiled, folders, tmp_path):
    scratch, layer = folders
    not_a_program = tmp_path / "python"
    not_a_program.write_text("")
    done = _direct(compiled, scratch, layer, f"echo made > {layer}/lost",
                   write_back=["--write-back", str(not_a_program), str(LAYER_MOUNT)])
    assert done.returncode == 0
    assert not (layer / "lost").exists()
    assert _report(scratch) == f"work\t{4 * MIB}\t0\t0\tthe write-back could not start: Permission denied\t\n"


@pytest.mark.parametrize("script, status", [("exit 3", 3), ("exit 0", 0)])
def test_the_launcher_exits_with_the_commands_status(compiled, folders, script, status):
    scratch, layer = folders
    assert _direct(compiled, scratch, layer, script).returncode == status


def test_the_launcher_dies_of_the_signal_its_command_died_of(compiled, folders):
    scratch, layer = folders
    assert _direct(compiled, scratch, layer, "kill -USR1 $$").returncode == -signal.SIGUSR1


# ---- the done word: the outcome before the launcher's exit ----

def _with_done_word(compiled: Path, scratch: Path, layer: Path, script: str) -> tuple[bytes, bool, int]:
    """The launcher over one layer with --done-fd: its word, whether the report was there when the
    word came, and its exit status."""
    read_end, write_end = os.pipe()
    launched = subprocess.Popen([str(compiled), *WRITE_BACK, "--nofile", "256", "--oom-first", "--done-fd",
                                 str(write_end), str(scratch), "work", str(4 * MIB), str(layer), "--",
                                 "/bin/sh", "-c", script], pass_fds=[write_end], stdout=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as done:
        word = done.read()
    reported = (scratch / "report").exists()
    return word, reported, launched.wait(timeout=60)


def test_a_command_that_wrote_nothing_is_over_for_the_bot_at_the_launchers_word(compiled, folders):
    scratch, layer = folders
    word, reported, status = _with_done_word(compiled, scratch, layer, "exit 3")
    assert (word, reported, status) == (b"768\n", True, 3)  # 768: the wait status of an exit 3


def test_the_done_word_of_a_command_killed_by_a_signal_is_its_wait_status(compiled, folders):
    scratch, layer = folders
    word, _, status = _with_done_word(compiled, scratch, layer, "kill -USR1 $$")
    assert (word, status) == (f"{signal.SIGUSR1.value}\n".encode(), -signal.SIGUSR1)


def test_after_a_write_back_there_is_no_done_word_and_the_exit_is_the_outcome(compiled, folders):
    scratch, layer = folders
    word, _, status = _with_done_word(compiled, scratch, layer, f"echo made > {layer}/f")
    assert (word, status) == (b"", 0)
    assert (layer / "f").read_text() == "made\n"


def test_the_command_never_holds_the_done_descriptor(compiled, folders):
    scratch, layer = folders
    read_end, write_end = os.pipe()
    done = subprocess.run([str(compiled), *WRITE_BACK, "--nofile", "256", "--oom-first", "--done-fd", str(write_end),
                           str(scratch), "work", str(4 * MIB), str(layer), "--", "/bin/sh", "-c", "ls /proc/self/fd"],
                          pass_fds=[write_end], capture_output=True, text=True, timeout=60)
    os.close(write_end)
    os.close(read_end)
    assert sorted(int(fd) for fd in done.stdout.split()) == [0, 1, 2, 3], done.stdout


def _offering(compiled: Path, scratch: Path, layer: Path, script: str, answer: bytes | None) -> tuple[bytes, int]:
    """The launcher with --done-fd and --apply-fd over one layer: its word, then `answer` from the
    bot (None: the bot's end closed unanswered, as when the bot is gone); its exit status."""
    word_r, word_w = os.pipe()
    answer_r, answer_w = os.pipe()
    launched = subprocess.Popen([str(compiled), *WRITE_BACK, "--nofile", "256", "--oom-first", "--done-fd",
                                 str(word_w), "--apply-fd", str(answer_r), str(scratch), "work", str(4 * MIB),
                                 str(layer), "--", "/bin/sh", "-c", script], pass_fds=[word_w, answer_r],
                                stdout=subprocess.DEVNULL)
    os.close(word_w)
    os.close(answer_r)
    with os.fdopen(word_r, "rb") as word_end:
        word = word_end.read()
    with os.fdopen(answer_w, "wb") as answer_end:
        if answer is not None:
            answer_end.write(answer)
    return word, launched.wait(timeout=60)


def test_a_command_that_wrote_is_offered_to_the_bot_which_answers_that_it_applied_it(compiled, folders):
    scratch, layer = folders
    word, status = _offering(compiled, scratch, layer, f"echo made > {layer}/f; exit 3", b"applied\n")
    assert (word, status) == (b"apply 768 0\n", 3)
    assert not (layer / "f").exists() and not (scratch / "report").exists()  # the bot's to do, not the launcher's


@pytest.mark.parametrize("answer", [None, b"", b"nope\n", b"applied", b"applied\napplied\n"])
def test_a_bot_that_does_not_answer_applied_leaves_the_launchers_own_write_back_to_run(compiled, folders, answer):
    scratch, layer = folders
    word, status = _offering(compiled, scratch, layer, f"echo made > {layer}/f; exit 3", answer)
    assert (word, status) == (b"apply 768 0\n", 3)
    assert (layer / "f").read_text() == "made\n"
    assert _report(scratch) == f"work\t{4 * MIB}\t0\t1\t\t\n"


def test_a_command_that_wrote_nothing_is_not_offered_with_the_apply_descriptor_given(compiled, folders):
    scratch, layer = folders
    word, status = _offering(compiled, scratch, layer, "exit 3", None)
    assert (word, status) == (b"768\n", 3)


def test_a_done_descriptor_that_is_not_open_refuses_the_start_before_anything_runs(compiled, folders, tmp_path):
    scratch, layer = folders
    done = _run(compiled, [*WRITE_BACK, "--nofile", "256", "--oom-first", "--done-fd", "999", str(scratch), "work",
                           str(4 * MIB), str(layer), "--", "/bin/sh", "-c", f"touch {tmp_path}/ran"])
    assert done.returncode == 72, done.stderr
    assert "keep the done descriptor" in done.stderr
    assert not (tmp_path / "ran").exists()


# ---- under tier 1 ----

async def test_a_tier1_sandbox_runs_under_the_compiled_launcher(compiled, config):
    proc = await Tier1Spawner(host=current().sandbox_host).start(replace(config, writable=True), ["sleep", "30"], {})
    try:
        assert Path(f"/proc/{proc.pid}/exe").resolve() == compiled.resolve()
    finally:
        await proc.kill()


@pytest.mark.skipif(not is_root(), reason="an unprivileged bot and its sandbox share one uid")
async def test_under_the_compiled_launcher_the_command_is_the_sandbox_user_under_seccomp(compiled, run, config):
    ran = await run("id -u; echo made > f; unshare -U true; echo unshare=$?", writable=True)
    assert ran.out.splitlines()[0] == "65533" and "unshare=1" in ran.out, ran.text
    assert (config.workdir / "f").stat().st_uid == 65533


# bubblewrap exits 128 + N for a command killed by signal N
@pytest.mark.parametrize("script, code", [("exit 3", 3), ("exit 0", 0), ("kill -USR1 $$", 128 + signal.SIGUSR1)])
async def test_a_tier1_run_that_wrote_nothing_takes_its_exit_code_from_the_launchers_word(compiled, config,
                                                                                        monkeypatch, script, code):
    words: list[process_module.Word | None] = []
    heard = process_module.heard

    def spied(data: bytes) -> process_module.Word | None:
        words.append(heard(data))
        return words[-1]

    monkeypatch.setattr(process_module, "heard", spied)
    proc = await Tier1Spawner(host=current().sandbox_host).start(replace(config, writable=True), ["sh", "-c", script],
                                                                 {})
    assert await proc.wait() == code
    await proc.cleaned_up()
    assert words == [process_module.Word(code)] and proc.outcome()["exit_code"] == code


async def test_a_tier1_run_that_wrote_has_its_writes_applied_by_the_bot_for_the_waiting_launcher(compiled, config,
                                                                                                monkeypatch):
    applied: list[str] = []
    apply_from = Layers.apply_from

    def spied(layers: Layers, launcher_pid: int, full: str) -> None:
        applied.append(full)
        apply_from(layers, launcher_pid, full)

    monkeypatch.setattr(Layers, "apply_from", spied)
    proc = await Tier1Spawner(host=current().sandbox_host).start(
        replace(config, writable=True), ["sh", "-c", "echo made > kept.txt; mkfifo pipe; exit 3"], {})
    assert await proc.wait() == 3
    await proc.cleaned_up()
    assert applied == ["00"]  # the home and the worktree, neither full
    assert (config.workdir / "kept.txt").read_text() == "made\n" and not (config.workdir / "pipe").exists()
    outcome = proc.outcome()
    assert outcome["exit_code"] == 3 and outcome["disk_unkept"] == []
    assert outcome["write_back_dropped"] == [{"layer": "worktree", "dropped": {"fifo": 1}}]


async def test_when_the_bot_cannot_apply_the_writes_the_launchers_own_write_back_does(compiled, config, monkeypatch):
    def broken(layers: Layers, launcher_pid: int, full: str) -> None:
        raise RuntimeError("the bot's apply broke")

    monkeypatch.setattr(Layers, "apply_from", broken)
    proc = await Tier1Spawner(host=current().sandbox_host).start(
        replace(config, writable=True), ["sh", "-c", "echo made > kept.txt; exit 3"], {})
    assert await proc.wait() == 3
    await proc.cleaned_up()
    assert (config.workdir / "kept.txt").read_text() == "made\n"
    assert proc.outcome()["disk_unkept"] == []


async def test_a_tier1_sandbox_killed_under_the_compiled_launcher_keeps_its_writes(compiled, config):
    cfg = replace(config, writable=True, limits=Limits(timeout_s=60))
    proc = await Tier1Spawner(host=current().sandbox_host).start(
        cfg, ["sh", "-c", "echo made > kept.txt && echo ready && sleep 60"], {})
    assert await proc.stdout.readline() == b"ready\n"
    await proc.kill()
    assert (config.workdir / "kept.txt").read_text() == "made\n"
    assert proc.outcome()["killed"] is True


def test_without_a_compiler_the_python_launcher_runs_and_the_log_says_so(monkeypatch, tmp_path, caplog):
    monkeypatch.setattr(launcher, "_binary", tmp_path / "layer_launcher-none")
    monkeypatch.setattr(launcher, "COMPILERS", ("no-such-compiler",))
    monkeypatch.setattr(launcher, "_warned", False)
    assert launcher.find() is None
    assert "the compiled layer launcher cannot be built" in caplog.text


def test_a_missing_launcher_is_built_on_first_use(monkeypatch, tmp_path):
    monkeypatch.setattr(launcher, "BUILD_DIR", tmp_path / "build")
    monkeypatch.setattr(launcher, "_binary", None)
    built = launcher.find()
    assert built is not None and built.parent == tmp_path / "build" and os.access(built, os.X_OK)
    assert subprocess.run([str(built), "--check"], capture_output=True).returncode == USAGE


def test_a_launcher_that_fails_to_build_refuses_the_start_with_the_compilers_words(monkeypatch, tmp_path):
    from sandbox.base import Refused
    broken = tmp_path / "layer_launcher.c"
    broken.write_text("int main(void) { return missing; }\n")
    monkeypatch.setattr(launcher, "SOURCE", broken)
    monkeypatch.setattr(launcher, "BUILD_DIR", tmp_path / "build")
    monkeypatch.setattr(launcher, "_binary", None)
    with pytest.raises(Refused, match="(?s)failed to build: .*missing"):
        launcher.find()
    assert [p.name for p in (tmp_path / "build").iterdir()] == []


def test_a_build_replaces_only_earlier_builds_a_day_old(monkeypatch, tmp_path):
    """A process started before the source changed still runs its own build: two processes
    building in turn must not remove each other's binary."""
    build = tmp_path / "build"
    build.mkdir()
    recent, old = build / "layer_launcher-recent", build / "layer_launcher-old"
    for earlier in (recent, old):
        earlier.write_bytes(b"")
    day_ago = os.stat(old).st_mtime - launcher.OLD_BUILD_S - 60
    os.utime(old, (day_ago, day_ago))
    monkeypatch.setattr(launcher, "BUILD_DIR", build)
    monkeypatch.setattr(launcher, "_binary", None)
    built = launcher.find()
    assert built is not None
    assert sorted(path.name for path in build.iterdir()) == sorted([built.name, recent.name])


def test_the_write_back_starts_without_loading_ctypes():
    """The compiled launcher execs sandbox/layer_mount.py for every run that wrote: ctypes, which
    only the Python launcher's mounts need, was about a third of that start."""
    loaded = subprocess.run([sys.executable, "-I", "-S", "-c",
                             f"import sys; sys.path.insert(0, {str(LAYER_MOUNT.parent)!r}); import layer_mount; "
                             "print('ctypes' in sys.modules)"], capture_output=True, text=True, timeout=60)
    assert loaded.stdout == "False\n", loaded.stderr


async def test_a_run_is_cleaned_up_when_the_bot_holds_more_descriptors_than_select_takes(compiled, config):
    """A busy service holds thousands of descriptors: the clean-up waits for the launcher's exit on
    its pidfd, whatever its number (select() refuses one past FD_SETSIZE, 1024)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 4096), max(hard, 4096)))
    held = [os.open("/dev/null", os.O_RDONLY) for _ in range(1100)]
    try:
        proc = await Tier1Spawner(host=current().sandbox_host).start(replace(config, writable=True), ["true"], {})
        assert proc._pidfd is not None and proc._pidfd > 1024  # noqa: SLF001  (the case under test)
        assert await proc.wait() == 0
        await proc.cleaned_up()
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
