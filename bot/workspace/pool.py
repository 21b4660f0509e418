"""Spare checkouts per mirror, so a job's worktree does not rewrite every file of the repository.

Writing out a checkout of a large repository is most of the time to a ready worktree (a
`git clone --depth 1` pays it too). After a job its worktree is scrubbed back to pristine —
`reset --hard`, `clean -ffdx`, verified empty `status --ignored` — and parked under
worktrees/.spare/<owner>/<repo>/; the next job on that mirror moves it to its conversation's path
and checks out its commit, which touches only the files that differ. A worktree that cannot be
scrubbed or moved (tampered `.git`, unreadable files) is deleted instead. All calls here are made
under the mirror's lock.

The scrub is git over the agent's tree, so the tree is scanned first (bot/workspace/tree_scan.py):
a repository planted anywhere, or anything inside a submodule path (git's clean and status never
look there), and the worktree is deleted without git ever running over it. Deleting is
a removal at any depth without recursion (sandbox/bounded_tree.py: links not followed; a tree a
thousand folders deep would end `shutil.rmtree` with RecursionError) and `git worktree prune`
on the mirror.
"""
from __future__ import annotations

import contextlib
import uuid
from pathlib import Path

from bot.workspace import settle, tree_scan
from bot.workspace.git import GitError, pinned_env, run_git
from sandbox.bounded_tree import remove_path

SPARE_DIR = ".spare"


def spare_root(mirror: Path) -> Path:
    """worktrees/.spare/<owner>/<repo>.git in the data dir that holds mirrors/<owner>/<repo>.git."""
    return mirror.parents[2] / "worktrees" / SPARE_DIR / mirror.parent.name / mirror.name


def spares(mirror: Path) -> list[Path]:
    root = spare_root(mirror)
    return sorted(root.iterdir()) if root.is_dir() else []


async def take(mirror: Path, dest: Path, sha: str) -> Path | None:
    """Move a spare checkout to `dest` at `sha`; its git dir, or None when no spare is usable."""
    for spare in spares(mirror):
        code, _, _ = await run_git("worktree", "move", str(spare), str(dest), cwd=mirror)
        if code != 0:
            await discard(mirror, spare)
            continue
        git_dir = recorded_git_dir(mirror, dest)
        if git_dir and await _scrub(dest, git_dir, sha, verify=False):
            return git_dir
        await discard(mirror, dest)
    return None


async def give_back(mirror: Path, path: Path, git_dir: Path | None, keep: int) -> bool:
    """Scrub a finished job's worktree and park it as a spare, unless `keep` (BOT_SPARE_WORKTREES)
    are parked already; False if it was not kept."""
    if git_dir is None or len(spares(mirror)) >= keep or not path.exists():
        return False
    if not await _scrub(path, git_dir, "HEAD"):
        return False
    await settle.settle(path, git_dir)  # here, after the job: the next one takes it settled
    slot = spare_root(mirror) / uuid.uuid4().hex[:12]
    slot.parent.mkdir(parents=True, exist_ok=True)
    code, _, _ = await run_git("worktree", "move", str(path), str(slot), cwd=mirror)
    return code == 0


async def discard(mirror: Path, path: Path) -> None:
    """Delete the checkout's files (no git over them), then the mirror's record of it."""
    _remove(path)
    await run_git("worktree", "prune", cwd=mirror)


async def discard_all(mirror: Path) -> None:
    for spare in spares(mirror):
        await discard(mirror, spare)
    _remove(spare_root(mirror))


def _remove(path: Path) -> None:
    """What can be removed is; what cannot (a folder of someone else's) is left, as before."""
    with contextlib.suppress(OSError):
        remove_path(path)


def recorded_git_dir(mirror: Path, path: Path) -> Path | None:
    """The admin dir the mirror records for `path` (trusted: read from the mirror, not the tree)."""
    admin = mirror / "worktrees"
    for entry in admin.iterdir() if admin.is_dir() else ():
        gitdir_file = entry / "gitdir"
        if gitdir_file.exists() and Path(gitdir_file.read_text().strip()).parent == path:
            return entry
    return None


async def _scrub(path: Path, git_dir: Path, sha: str, verify: bool = True) -> bool:
    """Tracked files exactly at `sha`, nothing untracked or ignored; False if that fails.
    A spare was verified pristine when parked, so taking it only checks out `sha`."""
    env = pinned_env(git_dir, path)
    dot_git = path / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return False
    if verify and not await _nothing_planted(path, git_dir):
        return False
    dot_git.unlink(missing_ok=True)
    dot_git.write_text(f"gitdir: {git_dir}\n")
    if not verify and _head(git_dir) == sha:
        return True  # parked pristine at this very commit: nothing to check out
    steps: list[tuple[str, ...]] = [("checkout", "--quiet", "--detach", "--force", "--no-recurse-submodules", sha)]
    steps += [("clean", "-ffdxq")] if verify else []
    for args in steps:
        code, _, _ = await run_git(*args, cwd=path, env=env)
        if code != 0:
            return False
    if not verify:
        return True
    code, out, _ = await run_git("status", "--porcelain", "--ignored", "--untracked-files=all",
                                 "--ignore-submodules=all", cwd=path, env=env)
    return code == 0 and out.strip() == ""


async def _nothing_planted(path: Path, git_dir: Path) -> bool:
    """No repository anywhere in the tree and nothing in a submodule path (of HEAD, the commit
    the admin dir records), so git can scrub it without entering anything of the agent's."""
    try:
        submodules = await tree_scan.submodule_paths(git_dir, "HEAD")
    except GitError:
        return False
    return tree_scan.scan(path, submodules).clean


def _head(git_dir: Path) -> str | None:
    """The detached HEAD recorded in the mirror's admin dir for this checkout (not agent-writable)."""
    try:
        return (git_dir / "HEAD").read_text().strip()
    except OSError:
        return None
