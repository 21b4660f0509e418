"""Pushing the bot's commit (for bot/workspace/effects.py): a push rejected because the branch moved
is fetched, rebased on top once and retried; a push that cannot land comes back as a diff."""
from __future__ import annotations

import logging
import re
from typing import cast

from bot.workspace.git import GitProfile, git_head, redact, run_git
from bot.workspace.outcome import Outcome
from bot.workspace.staging import bare_git
from bot.workspace.worktrees import Worktree, mirror_lock

log = logging.getLogger(__name__)

MAX_DIFF_CHARS = 60_000
DIFF_READ_CAP = MAX_DIFF_CHARS * 4  # what is read of git's diff: no character takes more than four bytes
_REJECTED = re.compile(r"Updates were rejected|\[rejected\]|non-fast-forward|fetch first|stale info")


async def push(wt: Worktree, token: str | None, done: Outcome, repo: str, branch: str) -> Outcome:
    """Push HEAD to repo's branch; if the branch moved, rebase on it once and push again."""
    profile = wt.prepared().git
    done.repo, done.branch, done.git_base_url = repo, branch, profile.base_url
    url = profile.clone_url(repo)
    code, out, err = await _push_once(wt, token, url, branch, profile)
    if code != 0 and _REJECTED.search(out + err):
        problem = await _rebase_on_remote(wt, token, url, branch, profile)
        if problem == "conflict":
            return await with_diff(wt, done, "conflict", f"`{branch}` on {repo} moved while I worked and "
                                    "my change conflicts with the new commits; here it is as a diff.")
        if problem:
            return await with_diff(wt, done, "failed", f"`{branch}` on {repo} moved while I worked and "
                                    f"{problem}; here is the change as a diff.")
        done.commit_sha = (await bare_git(wt, "rev-parse", "HEAD")).strip()
        code, out, err = await _push_once(wt, token, url, branch, profile)
    if code != 0:
        log.warning("push to %s %s failed: %s", repo, branch, redact(err, token))
        reason = push_refusal(out) or last_line(redact(err, token))
        return await with_diff(wt, done, "failed", f"Pushing to `{branch}` on {repo} failed: "
                                f"{reason}. Here is the change as a diff.")
    done.kind = "pushed"
    done.message = f"Pushed {cast(str, done.commit_sha)[:7]} to {done.branch_link()} ({done.diffstat})."
    return done


async def _push_once(wt: Worktree, token: str | None, url: str, branch: str,
                     profile: GitProfile) -> tuple[int, str, str]:
    return await run_git("push", "--porcelain", "--no-verify", "--no-recurse-submodules", url,
                         f"HEAD:refs/heads/{branch}", cwd=wt.admin_dir, token=token, env=wt.repo_env(),
                         profile=profile)


async def _rebase_on_remote(wt: Worktree, token: str | None, url: str, branch: str,
                            profile: GitProfile) -> str | None:
    """Fetch the branch's new tip and replay our commit on it; None on success, else why not."""
    tracking = "refs/worktree/bot-remote"
    async with mirror_lock(wt.mirror):  # the object store is shared with concurrent jobs
        code, _, err = await run_git("fetch", "--quiet", "--no-write-fetch-head", "--no-recurse-submodules",
                                     url, f"+refs/heads/{branch}:{tracking}", cwd=wt.admin_dir, token=token,
                                     env=wt.repo_env(), profile=profile)
    if code != 0:
        return f"fetching it failed ({last_line(redact(err, token))})"
    # the one step that needs the tree (a checkout); it passed the scan, and no hook, editor or
    # submodule recursion is left to the configuration
    code, _, err = await run_git("rebase", "--quiet", "--no-verify", "--no-autostash", "--onto", tracking,
                                 wt.base_sha, cwd=wt.path, env=wt.git_env(), profile=profile)
    if code != 0:
        await run_git("rebase", "--abort", cwd=wt.path, env=wt.git_env(), profile=profile)
        return "conflict"
    return None


async def with_diff(wt: Worktree, done: Outcome, kind: str, message: str) -> Outcome:
    # the bot makes exactly one commit, so its parent..itself is the change even after a rebase
    out = await git_head("diff", "--no-color", "--no-ext-diff", "--no-textconv", f"{done.commit_sha}^",
                         cast(str, done.commit_sha), cap=DIFF_READ_CAP, cwd=wt.admin_dir, env=wt.repo_env())
    diff = out.stdout.decode("utf-8", "replace")
    if out.cut or len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n… (diff truncated)\n"
        message += f" The diff is longer than {MAX_DIFF_CHARS} characters and was truncated."
    done.kind, done.message, done.diff = kind, message, diff
    return done


def push_refusal(porcelain: str) -> str:
    """The reason on a `git push --porcelain` line for a refused ref (`!<TAB>ref<TAB>reason`)."""
    refused = [line.split("\t")[-1] for line in porcelain.splitlines() if line.startswith("!")]
    return refused[0] if refused else ""


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message from git"
