"""Scratch folders of the capped layers left by runs that ended without their bot
(sandbox/layers.py `sweep_stale`): removed when old and held by no live bot or launcher; a live
sandbox's folder is left, whether its bot is alive or gone."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox import layers
from sandbox.base import Limits, SandboxConfig
from sandbox.layers import LAUNCHER as LAYER_MOUNT
from tests.conftest import is_root

pytestmark = pytest.mark.sandbox
OLD = time.time() - 2 * layers.STALE_AFTER_S


def _scratch(folder: Path, name: str = "abc", age: float = OLD) -> Path:
    path = folder / f"{layers.SCRATCH_PREFIX}{name}"
    (path / "0").mkdir(parents=True)
    (path / "report").write_text("home\t4096\t0\t1\t\t\n")
    os.utime(path, (age, age))
    return path


def _age(path: Path) -> None:
    os.utime(path, (OLD, OLD))


def test_an_old_scratch_folder_nothing_holds_is_removed(tmp_path: Path) -> None:
    stale = _scratch(tmp_path)
    assert layers.sweep_stale(tmp_path) == [stale.name]
    assert not stale.exists()


def test_a_young_scratch_folder_is_left(tmp_path: Path) -> None:
    young = _scratch(tmp_path, age=time.time())
    assert layers.sweep_stale(tmp_path) == []
    assert young.exists()


def test_a_folder_named_otherwise_is_left(tmp_path: Path) -> None:
    other = tmp_path / "bot-probe-abc"
    other.mkdir()
    os.utime(other, (OLD, OLD))
    assert layers.sweep_stale(tmp_path) == []
    assert other.exists()


def test_a_link_named_as_a_scratch_folder_is_left_with_what_it_points_to(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("x")
    link = tmp_path / f"{layers.SCRATCH_PREFIX}link"
    link.symlink_to(target)
    os.utime(link, (OLD, OLD), follow_symlinks=False)
    assert layers.sweep_stale(tmp_path) == []
    assert (target / "keep.txt").exists() and link.is_symlink()


@pytest.mark.skipif(not is_root(), reason="chown to another user needs root")
def test_a_scratch_folder_of_another_user_is_left(tmp_path: Path) -> None:
    theirs = _scratch(tmp_path)
    os.chown(theirs, 65534, 65534)
    assert layers.sweep_stale(tmp_path) == []
    assert theirs.exists()


def test_the_layers_of_a_run_in_progress_are_left_while_the_bot_holds_them(tmp_path: Path) -> None:
    config = SandboxConfig(workdir=tmp_path, home=tmp_path / "home", limits=Limits())
    config.home.mkdir()
    capped = layers.plan(config)
    try:
        _age(capped.scratch)
        assert capped.scratch.name not in layers.sweep_stale(capped.scratch.parent)
        assert capped.scratch.exists()
    finally:
        capped.remove()


def _launcher_argv(compiled: Path | None, scratch: Path, layer: Path, script: str) -> list[str]:
    """The launcher over one layer running `sh -c script` as bubblewrap would be run (its child)."""
    if compiled is None:
        return [sys.executable, "-I", "-S", str(LAYER_MOUNT), str(scratch), "work", "4194304", str(layer),
                "--", "/bin/sh", "-c", script]
    return [str(compiled), "--write-back", sys.executable, str(LAYER_MOUNT), "--nofile", "256", "--oom-first",
            str(scratch), "work", "4194304", str(layer), "--", "/bin/sh", "-c", script]


@pytest.mark.parametrize("kind", ["compiled", "python"])
def test_a_live_sandboxs_layers_are_left_once_its_bot_is_gone_and_removed_after(tmp_path: Path, kind: str,
                                                                                 compiled_launcher) -> None:
    if kind == "compiled" and compiled_launcher is None:
        pytest.skip("no C compiler here")
    scratch = tmp_path / f"{layers.SCRATCH_PREFIX}live"
    scratch.mkdir(mode=0o700)
    layer = tmp_path / "layer"
    layer.mkdir()
    go = tmp_path / "go"
    # the launcher alone holds the scratch folder, as when the bot that started it was killed
    launcher = subprocess.Popen(_launcher_argv(compiled_launcher if kind == "compiled" else None, scratch, layer,
                                               f"echo x > {layer}/written; while [ ! -e {go} ]; do sleep 0.05; done"))
    try:
        deadline = time.monotonic() + 30
        while not (scratch / "0").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        _age(scratch)
        assert layers.sweep_stale(tmp_path) == []
        assert scratch.exists()
        go.touch()
        assert launcher.wait(timeout=60) == 0
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    assert (layer / "written").read_text() == "x\n"  # its write-back ran with the folder in place
    _age(scratch)
    assert layers.sweep_stale(tmp_path) == [scratch.name]
