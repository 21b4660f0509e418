"""scripts/action-sandbox, the Action's tier-1 preparation, against a cgroup tree in a temporary
folder (BOT_CGROUP_ROOT): it never runs where it would change this host (an AppArmor userns
setting present, a package missing) or without root."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "action-sandbox"
pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or Path("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").exists()
    or not all(shutil.which(tool) for tool in ("bwrap", "ip", "rg")),
    reason="needs root, and a host the script would not change")


def _run(root: Path, user: str = "nobody") -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), user], env={"PATH": os.environ["PATH"], "BOT_CGROUP_ROOT": str(root)},
                          capture_output=True, text=True, timeout=60)


def test_a_cgroup_subtree_is_delegated_to_the_runners_user(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpuset cpu io memory hugetlb pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("")
    done = _run(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["cgroup-parent=/bot-action", f"cgroup-step={tmp_path}/bot-action/step"]
    assert (tmp_path / "cgroup.subtree_control").read_text().split() == ["+memory", "+pids"]
    nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True).stdout)
    assert {(tmp_path / "bot-action" / p).stat().st_uid for p in ("", "step")} == {nobody}


def test_without_cgroup_v2_memory_and_pids_it_stops_with_the_reason(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu io\n")
    done = _run(tmp_path)
    assert done.returncode == 3 and "no memory controller" in done.stderr
    assert not (tmp_path / "bot-action").exists()
