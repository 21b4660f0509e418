"""The user's own checkout as a job's worktree (`bot run`): no mirror, nothing removed afterwards,
and the paths git shows as changed, asked the hardened way before and after the episode."""
from __future__ import annotations

import logging
import os
from pathlib import Path

from bot.workspace import repo_config
from bot.workspace.git import GitError, git, git_bytes, pinned_env
from bot.workspace.worktrees import Worktree

DIRTY_CHECK_TIMEOUT_S = 120.0
log = logging.getLogger(__name__)


async def local_worktree(repo: Path, conversation: str) -> Worktree:
    """The user's own checkout as the job's worktree (no mirror, no removal afterwards)."""
    sha = (await git("rev-parse", "HEAD", cwd=repo)).strip()
    branch = (await git("rev-parse", "--abbrev-ref", "HEAD", cwd=repo)).strip()
    git_dir = Path((await git("rev-parse", "--absolute-git-dir", cwd=repo)).strip())
    cfg = repo_config.load(repo, branch)
    return Worktree(repo, git_dir, f"local/{repo.name}", conversation, f"refs/heads/{branch}",
                    sha, branch, cfg, git_dir=git_dir)


async def dirty_paths(worktree: Worktree) -> set[str]:
    """The paths `git status` shows changed in the user's checkout, asked before and after the
    episode. The agent could write that checkout, so git is pinned to the git dir recorded
    before it ran (a rewritten `.git` file is never followed), gets the bot's hardened config
    (bot/workspace/git.py), and never looks into a submodule path: each is excluded by
    pathspec, so git does not even read the `.git` an agent may have swapped in there (a
    change inside a submodule is not listed). It does not write the user's index either.
    An untracked folder holding `.git` is still asked for its HEAD (no config is read); a FIFO
    there would block git, so a check that does not finish in DIRTY_CHECK_TIMEOUT_S counts
    nothing as changed instead of hanging the run."""
    env = pinned_env(worktree.git_dir, worktree.path)
    index = await git_bytes("ls-files", "-z", "--stage", cwd=worktree.path, env=env)
    entries = (entry.split(b"\t", 1) for entry in index.split(b"\0") if b"\t" in entry)
    excluded = [b":(top,literal,exclude)" + path for meta, path in entries if meta.startswith(b"160000 ")]
    try:
        status = await git_bytes("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                                 "--ignore-submodules=all", "--", ":(top)", *map(os.fsdecode, excluded),
                                 cwd=worktree.path, env=env, timeout_s=DIRTY_CHECK_TIMEOUT_S)
    except GitError as exc:
        if exc.code != -9:
            raise
        log.warning("the changed-files check of %s was stopped: %s", worktree.path, exc)
        return set()
    paths = (os.fsdecode(entry[3:]) for entry in status.split(b"\0") if len(entry) > 3)
    return {path for path in paths if not is_dropping(path)}


DROPPINGS = ("__pycache__",)  # what running the code leaves behind (Python's bytecode cache)


def is_dropping(path: str) -> bool:
    """A file the interpreter wrote while the agent ran the code, not a change it made: never
    counted as a changed file (git lists an untracked `__pycache__/` folder file by file)."""
    return any(part in DROPPINGS for part in path.split("/"))
