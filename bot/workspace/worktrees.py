"""Cached bare mirrors and one fresh worktree per job at the right commit (step 10 of one comment's
path in docs/architecture.md).

- mirrors/<owner>/<repo>.git: a bare clone, fetched before each job under a per-mirror lock
  (an asyncio lock within the process, an flock across processes);
- worktrees/<conversation-slug>: a detached worktree of the mirror at the default branch head
  (issue) or at refs/pull/N/head (pull request, forks included); the same path every turn of a
  conversation, created fresh for the job and removed after it;
- the repository configuration comes from the mirror's default branch, never the PR head;
- mirrors are garbage-collected least recently used first past BOT_MIRRORS_MAX_BYTES.

Once the agent has run, the worktree is the agent's: git over it is pinned to the admin dir
recorded here (`Worktree.git_env`, `repo_env`; bot/workspace/git.py says why), and a worktree
is thrown away by deleting its files and pruning the mirror's record, never `git worktree
remove` (which reads the tree's `.git` and would check a planted submodule's status).
"""
from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import time
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import Settings
from bot.workspace import mirror_read, repo_config, settle, tree_scan
from bot.workspace import pool as worktree_pool
from bot.workspace.git import GitError, GitProfile, git, pinned_env, run_git
from bot.workspace.repo_config import RepoConfig

log = logging.getLogger(__name__)

LAST_USED = "bot-last-used"
_BRANCHES = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
_LOCKS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = \
    weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class Workspace:
    """The operator's settings for mirrors and worktrees, taken once from the entry point's: where
    they live, how the bot's git reaches the host, and how much is kept."""

    data_dir: Path
    git: GitProfile
    spares_max: int  # BOT_SPARE_WORKTREES
    mirrors_max_bytes: int  # BOT_MIRRORS_MAX_BYTES

    @classmethod
    def of(cls, settings: Settings) -> Workspace:
        return cls(settings.data_dir, GitProfile.of(settings), settings.whole("BOT_SPARE_WORKTREES"),
                   settings.whole("BOT_MIRRORS_MAX_BYTES"))


@dataclass
class Worktree:
    path: Path  # host path; inside tier 1 it is mounted at /workspace
    mirror: Path
    full_name: str  # owner/repo of the base repository
    conversation: str  # thread key, owner/repo#N
    ref: str  # what it was made from: refs/heads/<default> or refs/pull/N/head
    base_sha: str
    default_branch: str
    config: RepoConfig  # from the default branch
    pull_number: int | None = None
    git_dir: Path | None = None  # the worktree's admin dir, recorded before the agent ran
    workspace: Workspace | None = None  # what it was prepared under; None for the user's own checkout
    _submodules: set[str] | None = field(default=None, repr=False, compare=False)

    def git_env(self) -> dict[str, str]:
        """Pin git to this worktree: an agent-edited `.git` file cannot redirect the bot's git."""
        return pinned_env(self.git_dir, self.path)

    async def submodules(self) -> set[str]:
        """The base commit's submodule paths (gitlinks), from the bot's object store."""
        if self._submodules is None:
            self._submodules = await tree_scan.submodule_paths(self.admin_dir, self.base_sha)
        return self._submodules

    @property
    def admin_dir(self) -> Path:
        """The git dir, as bot-side git's cwd; like pinned_env, refuses a tree without one."""
        if self.git_dir is None:
            raise ValueError("no git dir recorded for this tree: refusing to let git discover one")
        return self.git_dir

    def repo_env(self) -> dict[str, str]:
        """The bot's git dir with no work tree: for what needs nothing of the tree (hashing, the
        index, commits, pushes, diffs between commits), so nothing in the tree is read."""
        return pinned_env(self.git_dir)

    @property
    def profile(self) -> GitProfile | None:
        """Who the bot's commits here are by and where they go (None: the table's defaults)."""
        return self.workspace.git if self.workspace else None

    def prepared(self) -> Workspace:
        """The workspace it came from; a checkout of the user's (`bot run`) has none to push from."""
        if self.workspace is None:
            raise ValueError(f"{self.path} was not prepared from a mirror")
        return self.workspace


def conversation_slug(conversation: str) -> str:
    """A stable, filesystem-safe name for a thread key (`octo/repo#12` → `octo-repo-12-<hash>`)."""
    readable = re.sub(r"[^A-Za-z0-9._-]+", "-", conversation).strip("-.")[:80]
    return f"{readable}-{hashlib.sha256(conversation.encode()).hexdigest()[:8]}"


def mirror_path(full_name: str, data_dir: Path) -> Path:
    owner, _, repo = full_name.partition("/")
    if not owner or not repo or "/" in repo or owner in (".", "..") or repo in (".", ".."):
        raise ValueError(f"not an owner/repo name: {full_name!r}")
    return data_dir / "mirrors" / owner / f"{repo}.git"


def worktree_path(conversation: str, data_dir: Path) -> Path:
    return data_dir / "worktrees" / conversation_slug(conversation)


@contextlib.asynccontextmanager
async def mirror_lock(mirror: Path, timeout_s: float = 900.0) -> AsyncIterator[None]:
    """Exclusive use of one mirror: first among this loop's tasks, then among processes."""
    locks = _LOCKS.setdefault(asyncio.get_running_loop(), {})
    async with locks.setdefault(str(mirror), asyncio.Lock()):
        mirror.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{mirror}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            await _flock(fd, timeout_s, mirror)
            yield
        finally:
            os.close(fd)  # closing releases the flock


async def _flock(fd: int, timeout_s: float, mirror: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"mirror {mirror.name} stayed locked for {timeout_s:.0f} s") from None
            await asyncio.sleep(0.05)


async def update_mirror(full_name: str, workspace: Workspace, token: str | None = None,
                        pull_number: int | None = None) -> Path:
    """Create or fetch the bare mirror (and the PR head ref when asked); the caller holds the lock."""
    mirror, fetched = await _fetch(full_name, workspace, token, pull_number)
    if fetched:
        await _follow_renamed_default_branch(mirror, workspace.git.clone_url(full_name), token, workspace.git)
    return mirror


async def _fetch(full_name: str, workspace: Workspace, token: str | None, pull_number: int | None
                 ) -> tuple[Path, bool]:
    """The mirror, cloned or fetched (one fetch, the PR head ref with the branches), and whether
    it was fetched (a clone's HEAD is upstream's; a fetch never moves it)."""
    mirror = mirror_path(full_name, workspace.data_dir)
    profile = workspace.git
    url = profile.clone_url(full_name)
    pull = [f"+refs/pull/{int(pull_number)}/head:refs/pull/{int(pull_number)}/head"] if pull_number is not None else []
    fetched = (mirror / "HEAD").exists()
    if not fetched:
        await _clone_bare(url, mirror, token, profile)
    if fetched or pull:
        branches = _BRANCHES if fetched else ()
        await git("fetch", "--quiet", *(["--prune"] if fetched else []), "--no-write-fetch-head", url,
                  *branches, *pull, cwd=mirror, token=token, profile=profile)
    (mirror / LAST_USED).touch()
    return mirror, fetched


async def _clone_bare(url: str, mirror: Path, token: str | None, profile: GitProfile) -> None:
    partial = mirror.with_name(mirror.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(mirror, ignore_errors=True)  # a mirror without HEAD is a wreck, not a cache
    await git("clone", "--bare", "--quiet", url, str(partial), cwd=mirror.parent, token=token, profile=profile)
    # a bare clone stores the URL as `origin`; we always fetch by explicit URL instead
    await git("remote", "remove", "origin", cwd=partial)
    partial.rename(mirror)


async def _follow_renamed_default_branch(mirror: Path, url: str, token: str | None, profile: GitProfile) -> None:
    """HEAD of a bare clone is set once; if upstream renamed its default branch, ask it again."""
    code, _, _ = await run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=mirror)
    if code == 0:
        return
    listing = await git("ls-remote", "--symref", url, "HEAD", cwd=mirror, token=token, profile=profile)
    match = re.search(r"^ref: (refs/heads/\S+)\tHEAD$", listing, re.MULTILINE)
    if match:
        await git("symbolic-ref", "HEAD", match.group(1), cwd=mirror)


async def default_branch_of(mirror: Path) -> str:
    head = await git("symbolic-ref", "--quiet", "HEAD", cwd=mirror)
    return head.strip().removeprefix("refs/heads/")


async def prepare(full_name: str, conversation: str, settings: Settings, *, token: str | None = None,
                  pull_number: int | None = None, default_branch: str | None = None) -> Worktree:
    """A fresh worktree for one job. Raises ConfigError (nothing created) if bot.yml is invalid."""
    workspace = Workspace.of(settings)
    mirror = mirror_path(full_name, workspace.data_dir)
    path = worktree_path(conversation, workspace.data_dir)
    async with mirror_lock(mirror):
        _, fetched = await _fetch(full_name, workspace, token, pull_number)
        heads = await _job_heads(mirror, default_branch, pull_number)
        if fetched and not heads.head_resolves:
            await _follow_renamed_default_branch(mirror, workspace.git.clone_url(full_name), token, workspace.git)
            heads = await _job_heads(mirror, default_branch, pull_number)
        sha = heads.commit()
        await _clear(mirror, path)
        path.parent.mkdir(parents=True, exist_ok=True)
        git_dir = await worktree_pool.take(mirror, path, sha) or await _add_worktree(mirror, path, sha)
        await settle.settle(path, git_dir)  # else the sandbox's git re-reads each file checked out this second
    log.info("worktree %s at %s %s", path.name, heads.ref, sha[:12])
    return Worktree(path, mirror, full_name, conversation, heads.ref, sha, heads.branch, heads.config,
                    pull_number, git_dir, workspace)


@dataclass(frozen=True)
class _JobHeads:
    """What a job starts from, read from its mirror in one git (bot/workspace/mirror_read.py)."""

    branch: str  # the default branch
    ref: str  # the job's: refs/heads/<default> or refs/pull/N/head
    sha: str | None  # the commit `ref` names, None when none
    config: RepoConfig  # from the default branch, as repo_config.load reads it
    head_resolves: bool  # False: HEAD names a branch the mirror lacks (renamed upstream)

    def commit(self) -> str:
        if self.sha is None:
            raise GitError(("rev-parse", "--verify", self.ref), 128, f"fatal: {self.ref} names no commit in the mirror")
        return self.sha


async def _job_heads(mirror: Path, default_branch: str | None, pull_number: int | None) -> _JobHeads:
    branch = default_branch or await default_branch_of(mirror)
    branch_commit, config_file = f"refs/heads/{branch}^{{commit}}", f"refs/heads/{branch}:{repo_config.CONFIG_PATH}"
    ref = f"refs/pull/{int(pull_number)}/head" if pull_number is not None else f"refs/heads/{branch}"
    job_commit = f"{ref}^{{commit}}"
    names = list(dict.fromkeys(("HEAD", branch_commit, job_commit, config_file)))
    answers = await mirror_read.ask(mirror, names, config_file, repo_config.CONFIG_MAX_BYTES)
    at, found, job = answers.found[branch_commit], answers.found[config_file], answers.found[job_commit]
    config = repo_config.at_commit(at.oid if at else None, found.kind if found else None,
                                   found.size if found else 0, answers.contents)
    return _JobHeads(branch, ref, job.oid if job else None, config, answers.found["HEAD"] is not None)


async def _clear(mirror: Path, path: Path) -> None:
    """Nothing at the conversation's path, and no record of a worktree there (a crashed job's)."""
    if path.exists() or path.is_symlink() or worktree_pool.recorded_git_dir(mirror, path) is not None:
        await _discard_worktree(mirror, path)


async def _add_worktree(mirror: Path, path: Path, sha: str) -> Path:
    await git("worktree", "add", "--quiet", "--detach", "--force", str(path), sha, cwd=mirror)
    recorded = worktree_pool.recorded_git_dir(mirror, path)
    return recorded or Path((await git("rev-parse", "--absolute-git-dir", cwd=path)).strip())


async def remove(worktree: Worktree) -> None:
    """Take the job's worktree away from its conversation path: scrubbed into the spare pool, or
    deleted with the mirror's record of it. Then mirrors past BOT_MIRRORS_MAX_BYTES are collected."""
    workspace = worktree.prepared()
    async with mirror_lock(worktree.mirror):
        if not await worktree_pool.give_back(worktree.mirror, worktree.path, worktree.git_dir, workspace.spares_max):
            await _discard_worktree(worktree.mirror, worktree.path)
        # fetches never gc (gc.auto=0) so a job never waits on it; packs are tidied here instead
        await run_git("-c", "gc.auto=6700", "gc", "--auto", "--quiet", cwd=worktree.mirror)
        (worktree.mirror / LAST_USED).touch()
    await collect_garbage(workspace.data_dir, workspace.mirrors_max_bytes)


async def _discard_worktree(mirror: Path, path: Path) -> None:
    await worktree_pool.discard(mirror, path)


async def collect_garbage(data_dir: Path, max_bytes: int) -> list[str]:
    """Delete least recently used mirrors until they fit; in-use mirrors are kept. Returns names."""
    mirrors = _mirrors_by_last_use(data_dir)
    total = sum(size for _, size in mirrors)
    removed = []
    for mirror, size in mirrors:
        if total <= max_bytes:
            break
        if await _delete_if_idle(mirror):
            total -= size
            removed.append(f"{mirror.parent.name}/{mirror.name.removesuffix('.git')}")
    return removed


def mirrors_bytes(data_dir: Path) -> int:
    """The mirrors' and their spares' bytes, as `collect_garbage` counts them."""
    return sum(size for _, size in _mirrors_by_last_use(data_dir))


def _mirrors_by_last_use(data_dir: Path) -> list[tuple[Path, int]]:
    root = data_dir / "mirrors"
    found = [m for m in root.glob("*/*.git") if (m / "HEAD").exists()]
    found.sort(key=_last_used)
    return [(m, _disk_size(m)) for m in found]


def _disk_size(mirror: Path) -> int:
    """Bytes of the mirror and its spares; re-measured only when the mirror was used since."""
    cache, used = Path(f"{mirror}.size"), _last_used(mirror)
    try:
        stamp, cached = cache.read_text().split()
        if float(stamp) == used:
            return int(cached)
    except (OSError, ValueError):
        pass
    size = _tree_size(mirror) + _tree_size(worktree_pool.spare_root(mirror))
    cache.write_text(f"{used} {size}\n")
    return size


def _last_used(mirror: Path) -> float:
    marker = mirror / LAST_USED
    return marker.stat().st_mtime if marker.exists() else 0.0


def _tree_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


async def _delete_if_idle(mirror: Path) -> bool:
    """Delete the mirror unless a worktree uses it or another process holds its lock."""
    fd = os.open(f"{mirror}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        admin = mirror / "worktrees"
        registered = len(list(admin.iterdir())) if admin.is_dir() else 0
        if registered > len(worktree_pool.spares(mirror)):
            return False
        await worktree_pool.discard_all(mirror)
        shutil.rmtree(mirror)
        Path(f"{mirror}.size").unlink(missing_ok=True)
        log.info("mirror %s removed (least recently used)", mirror)
        return True
    finally:
        os.close(fd)
