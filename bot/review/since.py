"""What changed between the commit a pull request was last reviewed at and its head, from the
bot's own object store (git over the worktree's admin dir, no work tree: nothing of the
checkout is read).

    change = await since(worktree, "abc…")      # Change(base, files, diff, reason)
    change.incremental                          # False: review it whole, `change.reason` says why
    await touched(worktree, "abc…", "app.py")   # the file changed between that commit and the head

A reviewed commit that is no longer an ancestor of the head (a force-push rewrote the branch) or
is gone from the object store falls back to a whole review, saying so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bot.workspace.git import GitError, git, git_head, run_git

MAX_DIFF_CHARS = 60_000
# what is read of git's diff: no character takes more than four bytes, so the first MAX_DIFF_CHARS
# are in it; a pushed commit of a few KiB can make a diff of many MiB, which is never read whole
DIFF_READ_CAP = MAX_DIFF_CHARS * 4
NAMES_READ_CAP = 4 << 20  # the changed files' names (GitHub lists at most 3,000 of a pull request's)
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass
class Change:
    base: str | None  # the commit reviewed last; None: a whole review
    files: list[str] = field(default_factory=list)  # changed since `base`
    diff: str = ""  # `git diff base head`, cut to MAX_DIFF_CHARS (its last line then says so)
    cut: bool = False  # the diff was longer than MAX_DIFF_CHARS
    reason: str = ""  # why this review is whole although the pull request was reviewed

    @property
    def incremental(self) -> bool:
        return self.base is not None


def whole(reason: str = "") -> Change:
    return Change(None, reason=reason)


async def since(worktree: Any, last: str | None) -> Change:
    head = worktree.base_sha
    if last is None:
        return whole()
    short = f"`{last[:7]}`"
    if not _SHA.fullmatch(last):
        return whole(f"the commit reviewed last ({short}) is not a commit id")
    if last == head:
        return whole(f"the head {short} was reviewed already: reviewing it whole again")
    where = {"cwd": worktree.admin_dir, "env": worktree.repo_env()}
    code, _, _ = await run_git("cat-file", "-e", f"{last}^{{commit}}", **where)
    if code != 0:
        return whole(f"the commit reviewed last, {short}, is gone (a force-push dropped it)")
    code, _, _ = await run_git("merge-base", "--is-ancestor", last, head, **where)
    if code != 0:
        return whole(f"the commit reviewed last, {short}, is no longer in the pull request's history "
                     f"(a force-push rewrote it)")
    names = await git_head("diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", last, head,
                           cap=NAMES_READ_CAP, **where)
    if names.cut:
        return whole(f"more files changed since {short} than a review since then can list "
                     f"(their names passed {NAMES_READ_CAP} bytes)")
    diff, cut = await _diff(last, head, where)
    if cut:
        diff += f"\n… (the diff since {short} was cut at {MAX_DIFF_CHARS:,} characters)"
    listed = names.stdout.decode("utf-8", "replace").split("\0")
    return Change(last, [name for name in listed if name], diff, cut)


async def _diff(last: str, head: str, where: dict[str, Any]) -> tuple[str, bool]:
    """The first MAX_DIFF_CHARS of `git diff last head`, and whether there was more."""
    out = await git_head("diff", "--no-ext-diff", "--no-textconv", "--no-color", last, head,
                         cap=DIFF_READ_CAP, **where)
    text = out.stdout.decode("utf-8", "replace")
    return text[:MAX_DIFF_CHARS], out.cut or len(text) > MAX_DIFF_CHARS


async def touched(worktree: Any, commit: str, path: str) -> bool:
    """Whether `path` differs between `commit` and the head; False when that cannot be told."""
    if not _SHA.fullmatch(commit):
        return False
    try:
        out = await git("--literal-pathspecs", "diff", "--no-ext-diff", "--no-textconv", "--name-only", commit,
                        worktree.base_sha, "--", path, cwd=worktree.admin_dir, env=worktree.repo_env())
    except GitError:
        return False
    return bool(out.strip())
