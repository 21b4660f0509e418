"""Refuse rather than downgrade: a missing floor raises Refused with reason and fix, nothing runs."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from sandbox import select_spawner
from sandbox.base import REFUSED_EXIT_CODE, Refused
from sandbox.identity import SANDBOX_ID
from sandbox.tier0 import Tier0Spawner
from sandbox.tier1 import Tier1Spawner
from tests.conftest import is_root
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox
ROOT = Path(__file__).resolve().parents[2]


async def test_refuses_without_bwrap_on_path(config, monkeypatch, tmp_path):
    """With no bwrap on PATH, start() refuses and the command never runs."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(Refused) as refused:
        await Tier1Spawner(host=current().sandbox_host).start(config, ["/usr/bin/touch", "/workspace/ran"], {})
    assert "bwrap" in refused.value.reason and "apt-get install bubblewrap" in refused.value.fix
    assert not (config.workdir / "ran").exists()


async def test_refuses_with_empty_cgroup_root(config, monkeypatch, tmp_path):
    """With no usable cgroup (an empty cgroup root), start() refuses: no run without caps."""
    (tmp_path / "no-cgroups").mkdir()
    monkeypatch.setenv("BOT_CGROUP_ROOT", str(tmp_path / "no-cgroups"))
    config.writable = True
    with pytest.raises(Refused) as refused:
        await Tier1Spawner(host=current().sandbox_host).start(config, ["/usr/bin/touch", "/workspace/ran"], {})
    assert "no usable cgroup" in refused.value.reason and "Delegate" in refused.value.fix
    assert not (config.workdir / "ran").exists()


# A bwrap whose child dies while the bot wires it up, as a real one does when the container
# runtime masks /proc: the child's pid is reported on --info-fd, then the mount fails.
DYING_BWRAP = """#!{python}
import json, os, subprocess, sys, time
args = sys.argv[1:]
gone = subprocess.Popen(["true"]); gone.wait()
info = int(args[args.index("--info-fd") + 1])
os.write(info, json.dumps({{"child-pid": gone.pid}}).encode())
time.sleep(0.2)
sys.stderr.write("bwrap: Can't mount proc on /newroot/proc: Operation not permitted\\n")
sys.exit(1)
"""


async def test_a_child_that_dies_during_setup_is_reported_in_bwraps_words(config, monkeypatch, tmp_path):
    """The sandbox's child gone before its listeners are injected: the refusal quotes bwrap's
    error (what `bot sandbox check` turns into the missing requirement), not the vanished
    /proc/PID it raced with."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(DYING_BWRAP.format(python=sys.executable))
    (bin_dir / "bwrap").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    with pytest.raises(Refused) as refused:
        await Tier1Spawner(host=current().sandbox_host).start(config, ["/usr/bin/touch", "/workspace/ran"], {})
    assert "bubblewrap could not create the sandbox: bwrap: Can't mount proc" in refused.value.reason
    assert not (config.workdir / "ran").exists()


USERNS_CHILD = ("import ctypes, os, sys\n"
                "assert ctypes.CDLL(None, use_errno=True).unshare(0x10000000) == 0\n"
                "print('ready', flush=True)\nsys.stdin.readline()\n"
                "os.execvp(sys.argv[1], sys.argv[1:])\n")


def _in_user_namespace(id_map: str, script: str) -> subprocess.CompletedProcess:
    """Run `sh -c script` as root of a new user namespace with `id_map` as its uid and gid map."""
    child = subprocess.Popen([sys.executable, "-c", USERNS_CHILD, "sh", "-c", script, sys.executable],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=ROOT)
    assert child.stdout.readline() == "ready\n"
    for name in ("uid_map", "gid_map"):
        Path(f"/proc/{child.pid}/{name}").write_text(id_map)
    out, err = child.communicate("\n", timeout=60)
    return subprocess.CompletedProcess(child.args, child.returncode, out, err)


@pytest.mark.skipif(not is_root(), reason="mapping the sandbox uid into a user namespace needs root")
def test_refuses_when_user_namespaces_disabled(tmp_path):
    """In a user namespace whose max_user_namespaces is 0, bwrap fails and exec exits 70."""
    (tmp_path / "wt").mkdir()
    script = ("echo 0 > /proc/sys/user/max_user_namespaces && exec \"$0\" -m bot.cli sandbox exec "
              f"--writable --workdir {tmp_path / 'wt'} -- touch /workspace/ran")
    done = _in_user_namespace(f"0 0 1\n{SANDBOX_ID} {SANDBOX_ID} 1\n", script)
    assert done.returncode == REFUSED_EXIT_CODE
    assert "bubblewrap could not create the sandbox" in done.stderr
    assert "max_user_namespaces" in done.stderr
    assert not (tmp_path / "wt" / "ran").exists()


@pytest.mark.skipif(not is_root(), reason="needs root to map host root into a user namespace")
def test_root_that_cannot_map_the_sandbox_user_refuses(tmp_path):
    """Root in a user namespace holding no other uid cannot run the command as anyone but
    root: exec refuses (exit 70) rather than run it as host root."""
    (tmp_path / "wt").mkdir()
    script = (f"exec \"$0\" -m bot.cli sandbox exec --writable --workdir {tmp_path / 'wt'} "
              "-- touch /workspace/ran")
    done = _in_user_namespace("0 0 1\n", script)
    assert done.returncode == REFUSED_EXIT_CODE
    assert f"sandbox uid {SANDBOX_ID} is not mapped" in done.stderr
    assert not (tmp_path / "wt" / "ran").exists()


def test_doctor_reports_failed_floor_check(monkeypatch, tmp_path):
    """doctor_checks() names the failing floor check and skips the live start."""
    from sandbox import doctor_checks
    (tmp_path / "no-cgroups").mkdir()
    monkeypatch.setenv("BOT_CGROUP_ROOT", str(tmp_path / "no-cgroups"))
    verdicts = {name: ok for name, ok, _ in doctor_checks(current().sandbox_host)}
    assert verdicts["cgroup memory+pids caps"] is False
    assert verdicts["tier-1 sandbox starts"] is False
    assert verdicts["bubblewrap installed"] is True


def test_doctor_all_green_on_this_host():
    """On a host that meets the floor every check passes, including the live proxy probe."""
    from sandbox import doctor_checks
    checks = doctor_checks()
    assert [name for name, ok, _ in checks if not ok] == []
    assert "egress proxy answers inside" in [name for name, _, _ in checks]


async def test_tier0_spawner_refuses_a_tier1_floor(config):
    """Tier 0 never stands in for tier 1: a min_tier=1 config is refused."""
    with pytest.raises(Refused):
        await Tier0Spawner().start(config, ["true"], {})


def test_select_spawner_follows_configured_tier(monkeypatch):
    """BOT_SANDBOX_TIER picks the spawner; tier 1 is the default."""
    assert isinstance(select_spawner(current().sandbox_tier, current().sandbox_host), Tier1Spawner)
    monkeypatch.setenv("BOT_SANDBOX_TIER", "0")
    assert isinstance(select_spawner(current().sandbox_tier, current().sandbox_host), Tier0Spawner)
    assert isinstance(select_spawner(1), Tier1Spawner)
    with pytest.raises(ValueError):
        select_spawner(2)
