"""A planted `.git` pointer cannot make the tier-1 sandbox mount a host directory or a forged admin dir."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.sandbox


async def test_planted_git_pointer_does_not_mount_a_host_directory(run, config, data_dir):
    """A `.git` file the agent rewrote to name a host directory does not get it bound inside."""
    (config.workdir / ".git").write_text(f"gitdir: {data_dir}\n")
    ran = await run(f"cat {data_dir}/secret.key; ls {data_dir}")
    assert "master-key-material" not in ran.text
    assert "bot.db" not in ran.out


async def test_planted_git_pointer_to_a_forged_admin_dir_is_not_bound(run, config, data_dir):
    """A forged `<dir>/worktrees/<name>` admin dir in the worktree cannot widen what is bound."""
    admin = config.workdir / "fake" / "worktrees" / "x"
    admin.mkdir(parents=True)
    (admin / "gitdir").write_text(f"{config.workdir}/.git\n")
    (admin / "commondir").write_text(f"{data_dir}\n")
    (config.workdir / ".git").write_text(f"gitdir: {admin}\n")
    ran = await run(f"cat {data_dir}/secret.key")
    assert "master-key-material" not in ran.text


async def test_genuine_linked_worktree_still_reads_its_history(tmp_path, run, config):
    """A real `git worktree add` checkout keeps working git inside the sandbox."""
    import subprocess
    repo = tmp_path / "repo.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
    seed = tmp_path / "seed"
    subprocess.run(["git", "clone", "-q", str(repo), str(seed)], check=True, capture_output=True)
    (seed / "a.txt").write_text("a\n")
    for args in (["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "first"],
                 ["push", "-q", "origin", "HEAD:main"]):
        subprocess.run(["git", *args], cwd=seed, check=True, capture_output=True)
    linked = tmp_path / "linked"
    subprocess.run(["git", "worktree", "add", "-q", "--detach", str(linked), "main"], cwd=repo,
                   check=True, capture_output=True)
    ran = await run("git log --format=%s -1", workdir=linked)
    assert ran.out.strip() == "first", ran.text
