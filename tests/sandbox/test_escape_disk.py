"""Escape suite, disk: every writable layer of a sandbox is capped by the kernel.

The writable worktree, the CLI home and /tmp are each a filesystem of their cap's size inside
the sandbox: a write past the cap fails with ENOSPC ("No space left on device") while it is
written, whatever the speed, and what reaches the host is at most the cap. An episode whose
agent fills a layer ends with the limit named in its result.
"""
from __future__ import annotations

import os
from dataclasses import replace

import pytest

from adapters.base import Episode
from sandbox.base import Limits
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current
from tests.sandbox.shell_adapter import ShellAdapter
from tests.sandbox.tree_usage import usage

pytestmark = pytest.mark.sandbox
CAP = 16 << 20
NO_SPACE = "No space left on device"
ANSWER = 'echo \'{"text": "done"}\''


def _write_past_cap(path: str) -> str:
    return f'head -c {CAP + (1 << 20)} /dev/zero > "{path}"; echo rc=$?'


@pytest.fixture
def bot_sandbox_exec(tmp_path, monkeypatch, capfd):
    """`bot sandbox exec ARGS`, in this process (an unprivileged rerun may not be able to start
    this Python by its path); returns its stderr."""
    from bot.cli import sandbox as cli
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))

    def run(*args: str) -> str:
        cli.main(["exec", *args])
        return capfd.readouterr().err

    return run


def test_a_write_past_the_worktree_cap_in_bot_sandbox_exec_fails_with_no_space_left(tmp_path, bot_sandbox_exec):
    worktree = tmp_path / "worktree"
    worktree.mkdir()
    before = usage(worktree)[0]
    err = bot_sandbox_exec("--workdir", str(worktree), "--writable", "--worktree-growth", str(CAP),
                           "--", "sh", "-c", _write_past_cap("big"))
    assert NO_SPACE in err, err
    assert usage(worktree)[0] - before <= CAP


def test_a_write_past_the_home_cap_in_bot_sandbox_exec_fails_with_no_space_left(tmp_path, bot_sandbox_exec):
    home = tmp_path / "home"
    home.mkdir()
    before = usage(home)[0]
    err = bot_sandbox_exec("--workdir", str(tmp_path), "--home", str(home), "--home-size", str(CAP),
                           "--", "sh", "-c", _write_past_cap("$HOME/big"))
    assert NO_SPACE in err, err
    assert usage(home)[0] - before <= CAP


def test_bot_sandbox_exec_names_the_cap_a_full_folder_reached(tmp_path, bot_sandbox_exec):
    err = bot_sandbox_exec("--workdir", str(tmp_path), "--writable", "--worktree-growth", str(CAP),
                           "--", "sh", "-c", _write_past_cap("big"))
    assert "bot sandbox: the worktree reached its 16 MiB cap (--worktree-growth)" in err, err


async def test_a_write_past_the_tmp_cap_fails_with_no_space_left(run):
    ran = await run(_write_past_cap("/tmp/big"), limits=Limits(tmpfs_bytes=CAP, timeout_s=60))
    assert NO_SPACE in ran.err and "rc=1" in ran.out


async def test_a_writable_worktree_of_any_tier1_sandbox_is_capped_while_it_is_written(run, config):
    """The bridge's `run` tool and native episodes start tier 1 with the same config: no watch
    has to notice, the write itself fails."""
    before = usage(config.workdir)[0]
    ran = await run(_write_past_cap("/workspace/big"), writable=True,
                    limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    assert NO_SPACE in ran.err, ran.err
    assert usage(config.workdir)[0] - before <= CAP


async def test_changes_below_the_cap_land_in_the_worktree(run, config):
    """Created, changed, deleted and renamed files and folders all reach the host worktree."""
    (config.workdir / "old").mkdir()
    (config.workdir / "old" / "kept.txt").write_text("kept\n")
    (config.workdir / "gone.txt").write_text("gone\n")
    script = ("echo new > new.txt && echo changed >> README.md && rm gone.txt && mv old renamed && "
              "mkdir -p a/b && echo deep > a/b/c.txt && ln -s README.md link")
    ran = await run(script, writable=True, limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    assert ran.rc == 0, ran.err
    tree = config.workdir
    assert (tree / "new.txt").read_text() == "new\n"
    assert (tree / "README.md").read_text() == "hello from the worktree\nchanged\n"
    assert not (tree / "gone.txt").exists() and not (tree / "old").exists()
    assert (tree / "renamed" / "kept.txt").read_text() == "kept\n"
    assert (tree / "a" / "b" / "c.txt").read_text() == "deep\n"
    assert os.readlink(tree / "link") == "README.md"


async def test_thousands_of_new_folders_side_by_side_land_in_the_worktree(run, config):
    """More folders in one folder than the sandbox may hold descriptors (as npm leaves them)."""
    ran = await run("mkdir many && cd many && seq 1 5000 | xargs mkdir", writable=True,
                    limits=Limits(worktree_growth_bytes=64 << 20, timeout_s=60))
    assert ran.rc == 0, ran.err
    assert len(list((config.workdir / "many").iterdir())) == 5000


async def test_a_file_the_sandbox_gave_two_names_lands_as_one_file_with_both(run, config):
    ran = await run("mkdir d && echo one > d/a && ln d/a b", writable=True,
                    limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    assert ran.rc == 0, ran.err
    assert os.path.samefile(config.workdir / "d" / "a", config.workdir / "b")


async def test_a_read_only_folder_the_sandbox_filled_lands_with_its_files_and_mode(run, config):
    ran = await run("mkdir ro && echo x > ro/f && chmod 555 ro", writable=True,
                    limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    assert ran.rc == 0, ran.err
    assert (config.workdir / "ro" / "f").read_text() == "x\n"
    assert (config.workdir / "ro").stat().st_mode & 0o777 == 0o555


async def test_a_sandbox_killed_on_its_time_limit_keeps_the_writes_it_made(run, config):
    """As with a plain bind: a timed-out turn's session state and partial work are not lost."""
    ran = await run("echo made > kept.txt && echo ready && sleep 60", writable=True,
                    limits=Limits(worktree_growth_bytes=CAP, timeout_s=2))
    assert ran.outcome["timed_out"] is True
    assert (config.workdir / "kept.txt").read_text() == "made\n"


async def test_a_cancelled_sandbox_keeps_the_writes_it_made(config):
    cfg = replace(config, writable=True, limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    proc = await Tier1Spawner(host=current().sandbox_host).start(
        cfg, ["sh", "-c", "echo made > $HOME/kept.txt && echo ready && sleep 60"], {})
    assert await proc.stdout.readline() == b"ready\n"
    await proc.kill()
    assert (config.home / "kept.txt").read_text() == "made\n"


async def test_a_folder_the_sandbox_replaced_by_a_symlink_is_never_written_through(run, config, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (config.workdir / "sub").mkdir()
    (config.workdir / "sub" / "f.txt").write_text("inside\n")
    ran = await run(f"rm -r sub && ln -s {outside} sub", writable=True,
                    limits=Limits(worktree_growth_bytes=CAP, timeout_s=60))
    assert ran.rc == 0, ran.err
    assert os.readlink(config.workdir / "sub") == str(outside)
    assert list(outside.iterdir()) == []


async def _episode(config, script: str, **limits):
    from bot.episode.runner import run_episode
    cfg = replace(config, writable=True, limits=Limits(timeout_s=60, **limits))
    episode = Episode(prompt="p", workdir=cfg.mount_path, home=cfg.home, mode="native")
    return await run_episode(ShellAdapter(script), episode, Tier1Spawner(host=current().sandbox_host), cfg)


async def test_an_episode_whose_agent_fills_the_worktree_ends_with_the_limit_named(config):
    before = usage(config.workdir)[0]
    result = await _episode(config, f"{_write_past_cap('/workspace/big')}; {ANSWER}",
                            worktree_growth_bytes=CAP)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error.startswith("stopped: the worktree reached its 16 MiB disk cap (BOT_LIMIT_WORKTREE")
    assert usage(config.workdir)[0] - before <= CAP


async def test_an_episode_whose_agent_fills_its_home_ends_with_the_limit_named(config):
    result = await _episode(config, f"{_write_past_cap('$HOME/big')}; {ANSWER}", home_bytes=CAP)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error.startswith("stopped: the CLI home reached its 16 MiB disk cap (BOT_LIMIT_HOME")


def test_an_episode_whose_changes_could_not_be_applied_to_the_worktree_fails_with_the_reason(config):
    """A sandbox ended, but its layer could not be written back (the host disk full, say): the
    answer must not claim work that is not in the worktree."""
    from adapters.base import Result, Usage
    from bot.episode.disk_caps import stop_for_full_layer
    result = Result(ok=True, text="all done", session_id=None, usage=Usage(), events=[], agent="shell")
    result.outcome = {"disk_full": [], "disk_unkept": [{"layer": "worktree", "error": "No space left on device"}]}
    stop_for_full_layer(result, config)
    assert (result.ok, result.failure) == (False, "killed")
    assert result.error == ("the sandbox's changes to the worktree could not be kept: No space left on device")


async def test_the_command_under_capped_layers_gets_sigpipe_and_sigxfsz_at_their_defaults(run):
    """The launcher is Python, which ignores both; a pipeline inside must still end on SIGPIPE."""
    ran = await run("grep SigIgn /proc/self/status", writable=True)
    ignored = int(ran.out.split()[1], 16)
    assert ignored & (1 << (13 - 1)) == 0 and ignored & (1 << (25 - 1)) == 0, ran.out
