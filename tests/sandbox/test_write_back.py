"""The write-back of a capped layer (sandbox/layer_apply.py, sandbox/layer_mount.py), on host folders.

The sandbox-wide cases are in test_escape_writeback.py; these call the write-back itself on an
upper layer made here (any folder serves: the write-back reads it as overlay leaves it).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from sandbox import layer_apply
from tests.sandbox.tree_usage import usage

ROOT = Path(__file__).resolve().parents[2]
MIB = 1 << 20


def _layers(tmp_path: Path) -> tuple[Path, Path]:
    upper, lower = tmp_path / "upper", tmp_path / "lower"
    upper.mkdir()
    lower.mkdir()
    return upper, lower


def _python(code: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_a_write_back_killed_in_the_middle_of_a_file_leaves_nothing_in_the_folder(tmp_path):
    """SIGXFSZ at 1 MiB ends the copying process as SIGKILL would: no clean-up runs."""
    upper, lower = _layers(tmp_path)
    (upper / "big").write_bytes(os.urandom(4 * MIB))
    code = ("import resource, signal, sys; from sandbox import layer_apply; "
            "signal.signal(signal.SIGXFSZ, signal.SIG_DFL); "
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({MIB}, {MIB})); "
            "layer_apply.apply(sys.argv[1], sys.argv[2], layer_apply.Budget(64 << 20, 1024))")
    done = _python(code, str(upper), str(lower))
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert list(lower.iterdir()) == []


def test_the_bots_kill_after_the_sandbox_was_reaped_leaves_the_write_back_going():
    """The time limit may fall while the layers are applied: bubblewrap is reaped by then, and
    the launcher's SIGTERM handler must neither signal its old pid nor stop the write-back."""
    code = ("import os, signal, sys; sys.path.append('sandbox'); import layer_mount; "
            "layer_mount.run(['/bin/true'], []); "
            "os.kill(os.getpid(), signal.SIGTERM); print('went on')")
    done = _python(code)
    assert (done.returncode, done.stdout) == (0, "went on\n"), done.stderr


def test_a_file_past_the_budget_is_not_kept_and_the_rest_lands(tmp_path):
    upper, lower = _layers(tmp_path)
    (upper / "big").write_bytes(os.urandom(4 * MIB))
    (upper / "small").write_text("small\n")
    done = layer_apply.apply(str(upper), str(lower), layer_apply.Budget(MIB, 100))
    assert done.cap_reached and done.dropped == {"over_cap": 1}
    assert not (lower / "big").exists() and (lower / "small").read_text() == "small\n"


def test_a_file_past_the_budget_leaves_the_version_the_host_had(tmp_path):
    upper, lower = _layers(tmp_path)
    (upper / "file").write_bytes(os.urandom(4 * MIB))
    (lower / "file").write_text("before\n")
    layer_apply.apply(str(upper), str(lower), layer_apply.Budget(MIB, 100))
    assert (lower / "file").read_text() == "before\n"


def test_names_of_one_file_are_written_once_and_linked(tmp_path):
    upper, lower = _layers(tmp_path)
    (upper / "f").write_bytes(os.urandom(MIB))
    for number in range(200):
        os.link(upper / "f", upper / f"n{number}")
    done = layer_apply.apply(str(upper), str(lower), layer_apply.Budget(2 * MIB, 100))
    assert not done.cap_reached
    assert (lower / "n199").stat().st_nlink == 201 and os.path.samefile(lower / "f", lower / "n0")


def test_the_write_back_makes_no_more_inodes_than_its_budget(tmp_path):
    upper, lower = _layers(tmp_path)
    for number in range(300):
        (upper / f"e{number}").touch()
    before = usage(lower)[1]
    done = layer_apply.apply(str(upper), str(lower), layer_apply.Budget(64 * MIB, 100))
    assert done.cap_reached and usage(lower)[1] - before <= 100


def test_a_sparse_file_keeps_its_holes_and_its_data(tmp_path):
    upper, lower = _layers(tmp_path)
    with open(upper / "sparse", "wb") as handle:
        handle.seek(1 << 30)
        handle.write(b"middle")
        handle.truncate(1 << 40)
    layer_apply.apply(str(upper), str(lower), layer_apply.Budget(MIB, 100))
    copied = lower / "sparse"
    assert copied.stat().st_size == 1 << 40 and copied.stat().st_blocks * 512 <= 64 << 10
    with open(copied, "rb") as handle:
        handle.seek((1 << 30) - 2)
        assert handle.read(10) == b"\0\0middle\0\0"
