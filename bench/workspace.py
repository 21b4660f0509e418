"""Workspace benchmark: a ready worktree from a warm mirror vs `git clone --depth 1`.

Generates (once, cached under bench/out/) a repository of 5,000+ files and 300 commits with
`git fast-import`, serves it as BOT_GIT_BASE_URL=file://…, and times:
- a ready worktree for a job from a warm mirror (mirror fetch + worktree at the default head),
  from a recycled spare checkout and from a new `git worktree add` (no spares kept);
- a fresh `git clone --depth 1` of the same repository (what bots do per mention);
- the mirror update after one new commit lands upstream.

A new worktree and a clone both write every file, and what that costs depends on what the file
system deleted in the last minutes (ext4 without a journal, as here, skips every recently freed
inode when it picks one for a new file). So their rounds alternate, which goes first alternating
too, and each deletes its tree after its round (untimed), as the bot deletes a worktree it
cannot keep and a clone-per-mention bot deletes its clone: both meet the same file system.
The same rounds are then run on a tmpfs (/dev/shm), where writing a file costs the same whatever
was deleted before: what the bot's path and the clone cost themselves.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from bench import aims
from bench.size import pick, smoke

if TYPE_CHECKING:
    from bot.config import Settings

FILES, COMMITS, ROUNDS, RECYCLED_ROUNDS = pick(5_200, 200), pick(300, 5), pick(5, 1), pick(15, 2)
CACHE = Path(__file__).resolve().parent / "out" / ("workspace-smoke" if smoke() else "workspace")
REPO = "bench/big"
SHM = Path("/dev/shm")
GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "LC_ALL": "C"}


def run() -> list[str]:
    origin_root = _generated_repo()
    bare = origin_root / f"{REPO}.git"
    files = _git("ls-tree", "-r", "--name-only", "HEAD", cwd=bare).count("\n")
    commits = _git("rev-list", "--count", "HEAD", cwd=bare).strip()
    return _measure(origin_root, files, commits)


def _measure(origin_root: Path, files: int, commits: str) -> list[str]:
    from bot.config import Settings

    with tempfile.TemporaryDirectory(prefix="bench-workspace-") as scratch:
        # handed to the workspace as an entry point would: nothing of this section stays in os.environ
        settings = Settings({**os.environ, "BOT_DATA_DIR": str(Path(scratch) / "data"),
                             "BOT_GIT_BASE_URL": f"file://{origin_root}"})
        cold_s = _job_time("bench/big#cold", settings)
        recycled = [_job_time(f"bench/big#{n}", settings) for n in range(RECYCLED_ROUNDS)]
        _drop_spares(settings)
        added, clone = _added_and_cloned(origin_root, Path(scratch),
                                         Settings({**settings.environ, "BOT_SPARE_WORKTREES": "0"}))
        update = [_time_update(origin_root, n, settings) for n in range(ROUNDS)]
    ratio = statistics.median(clone) / statistics.median(recycled)
    aims.record("shallow clone ÷ warm worktree", ratio, at_least=20.0, floor=f"clone {statistics.median(clone) * 1000:.0f} ms")
    aims.record("shallow clone ÷ new worktree from a warm mirror", statistics.median(clone) / statistics.median(added),
                at_least=1.0, floor=f"clone {statistics.median(clone) * 1000:.0f} ms")
    return [f"repository: {files:,} files, {commits} commits (file:// remote, median of "
            f"{RECYCLED_ROUNDS} recycled, {ROUNDS} other rounds)",
            f"ready worktree, warm mirror + recycled checkout: {_ms(recycled)}",
            f"ready worktree, warm mirror + new worktree add:  {_ms(added)}",
            f"git clone --depth 1 of the same repository:     {_ms(clone)}",
            f"speed-up (clone / recycled): {ratio:.1f}x (goal >= 20x); "
            f"clone / worktree add: {statistics.median(clone) / statistics.median(added):.2f}x (goal > 1x)",
            f"mirror update after one new upstream commit: {_ms(update)}",
            f"first job on the repository (bare clone + worktree): {cold_s * 1000:.0f} ms",
            _in_memory(origin_root)]


def _in_memory(origin_root: Path) -> str:
    """The same new-worktree and clone rounds with both written to a tmpfs: what each costs
    the bot and git when the disk's inode allocator is out of the picture."""
    from bot.config import Settings

    if not _is_tmpfs(SHM):
        return f"in memory: skipped ({SHM} is not a writable tmpfs)"
    with tempfile.TemporaryDirectory(prefix="bench-workspace-", dir=SHM) as scratch:
        settings = Settings({**os.environ, "BOT_DATA_DIR": str(Path(scratch) / "data"),
                             "BOT_GIT_BASE_URL": f"file://{origin_root}", "BOT_SPARE_WORKTREES": "0"})
        _job_time("bench/big#cold", settings)
        added, clone = _added_and_cloned(origin_root, Path(scratch), settings)
    return (f"in memory ({SHM}): new worktree add {_ms(added)}; clone {_ms(clone)}; "
            f"clone / worktree add: {statistics.median(clone) / statistics.median(added):.2f}x")


def _is_tmpfs(path: Path) -> bool:
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return False
    return any(line.split()[1:3] == [str(path), "tmpfs"] for line in mounts) and os.access(path, os.W_OK)


def _added_and_cloned(origin_root: Path, scratch: Path, no_spares: Settings) -> tuple[list[float], list[float]]:
    """New worktrees (removed by the bot after each job) and clones (deleted after each), alternated."""
    added: list[float] = []
    clone: list[float] = []
    for n in range(ROUNDS):
        rounds = [lambda n=n: added.append(_job_time(f"bench/big#{n}", no_spares)),
                  lambda n=n: clone.append(_clone_time(origin_root, scratch / f"clone{n}"))]
        for one in rounds if n % 2 == 0 else rounds[::-1]:
            one()
    return added, clone


def _clone_time(origin_root: Path, dest: Path) -> float:
    elapsed = _time(lambda: _shallow_clone(origin_root, dest))
    shutil.rmtree(dest)
    return elapsed


def _drop_spares(settings: Settings) -> None:
    from bot.workspace import pool as worktree_pool
    from bot.workspace import worktrees as workspace

    asyncio.run(worktree_pool.discard_all(workspace.mirror_path(REPO, settings.data_dir)))


def _job_time(conversation: str, settings: Settings) -> float:
    """Time to a ready worktree (fetch + checkout); the removal after the job is not timed."""
    from bot.workspace import worktrees as workspace

    async def job() -> float:
        started = time.perf_counter()
        wt = await workspace.prepare(REPO, conversation, settings)
        elapsed = time.perf_counter() - started
        assert (wt.path / "README.md").exists()
        await workspace.remove(wt)
        return elapsed

    return asyncio.run(job())


def _shallow_clone(origin_root: Path, dest: Path) -> None:
    _git("clone", "--quiet", "--depth", "1", f"file://{origin_root}/{REPO}.git", str(dest), cwd=dest.parent)


def _time_update(origin_root: Path, n: int, settings: Settings) -> float:
    from bot.workspace import worktrees as workspace

    _commit_upstream(origin_root / f"{REPO}.git", n)
    where = workspace.Workspace.of(settings)

    async def update() -> None:
        async with workspace.mirror_lock(workspace.mirror_path(REPO, where.data_dir)):
            await workspace.update_mirror(REPO, where)

    return _time(lambda: asyncio.run(update()))


def _time(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _ms(samples: list[float]) -> str:
    return (f"{statistics.median(samples) * 1000:7.1f} ms (min {min(samples) * 1000:.1f}, "
            f"max {max(samples) * 1000:.1f})")


def _generated_repo() -> Path:
    root = CACHE / "origin"
    bare = root / f"{REPO}.git"
    if (bare / "bench-complete").exists():  # drop the upstream commits of an earlier run
        _git("update-ref", "refs/heads/main", (bare / "bench-complete").read_text().strip(), cwd=bare)
        return root
    shutil.rmtree(root, ignore_errors=True)
    bare.parent.mkdir(parents=True)
    _git("init", "--quiet", "--bare", "-b", "main", str(bare), cwd=root)
    subprocess.run(["git", "fast-import", "--quiet"], input=_fast_import_stream(), cwd=bare,
                   env=GIT_ENV, check=True)
    _git("gc", "--quiet", cwd=bare)
    (bare / "bench-complete").write_text(_git("rev-parse", "refs/heads/main", cwd=bare))
    return root


def _fast_import_stream() -> bytes:
    """Commit 1 adds FILES files; each later commit edits a handful of them."""
    out: list[bytes] = []
    for number in range(1, COMMITS + 1):
        paths = range(FILES) if number == 1 else [(number * 37 + k * 101) % FILES for k in range(8)]
        out.append(b"commit refs/heads/main\n")
        out.append(f"committer Bench <bench@example.com> {1_700_000_000 + number * 60} +0000\n".encode())
        message = f"change {number}\n".encode()
        out.append(b"data %d\n%s" % (len(message), message))
        for index in paths:
            content = _file_content(index, number)
            out.append(f"M 644 inline {_file_path(index)}\n".encode())
            out.append(b"data %d\n%s\n" % (len(content), content))
        if number == 1:
            readme = b"# bench\n"
            out.append(b"M 644 inline README.md\ndata %d\n%s\n" % (len(readme), readme))
    return b"".join(out)


def _file_path(index: int) -> str:
    return f"pkg{index % 40:02d}/mod{index // 40 % 13:02d}/file{index:05d}.py"


def _file_content(index: int, version: int) -> bytes:
    body = "".join(f"def f{index}_{k}(x):\n    return x * {k} + {version}\n\n" for k in range(12))
    return f"# file {index} version {version}\n{body}".encode()


def _commit_upstream(bare: Path, n: int) -> None:
    path = f"upstream/new{n}.txt"
    blob = _git("hash-object", "-w", "--stdin", cwd=bare, stdin=f"new {n}\n").strip()
    subprocess.run(["git", "read-tree", "HEAD"], cwd=bare, env={**GIT_ENV, "GIT_INDEX_FILE": "bench-index"},
                   check=True)
    index_env = {**GIT_ENV, "GIT_INDEX_FILE": "bench-index"}
    subprocess.run(["git", "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}"], cwd=bare,
                   env=index_env, check=True)
    tree = subprocess.run(["git", "write-tree"], cwd=bare, env=index_env, check=True,
                          capture_output=True, text=True).stdout.strip()
    identity = {"GIT_AUTHOR_NAME": "B", "GIT_AUTHOR_EMAIL": "b@example.com",
                "GIT_COMMITTER_NAME": "B", "GIT_COMMITTER_EMAIL": "b@example.com"}
    sha = subprocess.run(["git", "commit-tree", tree, "-p", "HEAD", "-m", f"upstream {n}"], cwd=bare,
                         env={**GIT_ENV, **identity}, check=True, capture_output=True, text=True).stdout
    _git("update-ref", "refs/heads/main", sha.strip(), cwd=bare)
    (bare / "bench-index").unlink(missing_ok=True)


def _git(*args: str, cwd: Path, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, input=stdin, capture_output=True,
                          text=True, check=True).stdout


if __name__ == "__main__":
    print("\n".join(run()))
