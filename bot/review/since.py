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

from bot.workspace.git import GitError, git, run_git

MAX_DIFF_CHARS = 60_000
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass
class Change:
    base: str | None  # the commit reviewed last; None: a whole review
    files: list[str] = field(default_factory=list)  # changed since `base`
    diff: str = ""  # `git diff base head`, cut to MAX_DIFF_CHARS
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
    names = await git("diff", "--no-ext-diff", "--no-textconv", "--name-only", "-z", last, head, **where)
    diff = await git("diff", "--no-ext-diff", "--no-textconv", "--no-color", last, head, **where)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n… (cut)"
    return Change(last, [name for name in names.split("\0") if name], diff)


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
