"""`bot run "<request>" [--agent NAME] [--repo PATH] [--new]`: the same pipeline on a local
repository. Live progress goes to stderr, the answer and its provenance to stdout. Changes the
agent makes through the bridge land in that checkout; nothing is committed or pushed.
The thread is the repository itself, so the next `bot run` in it resumes the same session.
"""
from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import os
import sys
from pathlib import Path

from bot import config
from bot.job import conversations
from bot.job import pipeline
from bot.service import store
from bot.record.redact import install_log_redaction
from sandbox.limits import raise_open_files_limit


DIRTY_CHECK_TIMEOUT_S = 120.0


class TerminalSurface:
    """The tracking comment, on a terminal: checklist lines as they appear, the answer at the end."""

    def __init__(self, stream=sys.stderr):
        self.stream, self.shown, self.last = stream, set(), ""

    async def post(self, body: str) -> int:
        await self.edit(1, body)
        return 1

    async def edit(self, handle, body: str) -> None:
        self.last = body
        for line in body.splitlines():
            if (line.startswith("- [") or line.startswith("**")) and line not in self.shown:
                self.shown.add(line)
                print(line, file=self.stream, flush=True)


async def local_worktree(repo: Path, conversation: str):
    """The user's own checkout as the job's worktree (no mirror, no removal afterwards)."""
    from bot.workspace import repo_config
    from bot.workspace.git import git
    from bot.workspace.worktrees import Worktree

    sha = (await git("rev-parse", "HEAD", cwd=repo)).strip()
    branch = (await git("rev-parse", "--abbrev-ref", "HEAD", cwd=repo)).strip()
    git_dir = Path((await git("rev-parse", "--absolute-git-dir", cwd=repo)).strip())
    cfg = repo_config.load(repo, branch)
    return Worktree(repo, git_dir, f"local/{repo.name}", conversation, f"refs/heads/{branch}",
                    sha, branch, cfg, git_dir=git_dir)


async def dirty_paths(worktree) -> set[str]:
    """The paths `git status` shows changed in the user's checkout, asked before and after the
    episode. The agent could write that checkout, so git is pinned to the git dir recorded
    before it ran (a rewritten `.git` file is never followed), gets the bot's hardened config
    (bot/workspace/git.py), and never looks into a submodule path: each is excluded by
    pathspec, so git does not even read the `.git` an agent may have swapped in there (a
    change inside a submodule is not listed). It does not write the user's index either.
    An untracked folder holding `.git` is still asked for its HEAD (no config is read); a FIFO
    there would block git, so a check that does not finish in DIRTY_CHECK_TIMEOUT_S counts
    nothing as changed instead of hanging the run."""
    from bot.workspace.git import GitError, git_bytes, pinned_env

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
        logging.getLogger(__name__).warning("the changed-files check of %s was stopped: %s", worktree.path, exc)
        return set()
    return {os.fsdecode(entry[3:]) for entry in status.split(b"\0") if len(entry) > 3}


def context(request: str, repo: Path, agent: str | None, new: bool, surface) -> pipeline.JobContext:
    key = f"local:{repo}"
    return pipeline.JobContext(conversation=key, repo=f"local/{repo.name}", request=request,
                               requester=getpass.getuser(), surface=surface, agent=agent,
                               new_session=new, local_repo=repo, progress_interval_s=0.5)


async def run_local(request: str, repo: Path, agent: str | None, new: bool, out=sys.stdout) -> int:
    db = store.connect()
    surface = TerminalSurface()
    ctx = context(request, repo, agent, new, surface)
    conversations.ensure(db, ctx.conversation)
    status = await pipeline.run(db, ctx, asyncio.Event())
    print(surface.last, file=out, flush=True)
    return 0 if status == "done" else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bot run", description="Run one request against a local repository.")
    parser.add_argument("request", help="what to ask the agent")
    parser.add_argument("--agent", choices=config.AGENTS, default=None,
                        help="agent CLI (default: the repository's, else BOT_DEFAULT_AGENT)")
    parser.add_argument("--repo", default=".", help="path of the git repository (default: .)")
    parser.add_argument("--new", action="store_true", help="start a fresh session instead of resuming")
    args = parser.parse_args(argv)
    raise_open_files_limit()
    logging.basicConfig(level=config.env("BOT_LOG_LEVEL", "WARNING"))
    install_log_redaction()
    repo = Path(args.repo).resolve()
    if not (repo / ".git").exists():
        print(f"bot run: {repo} is not a git repository", file=sys.stderr)
        return 2
    return asyncio.run(run_local(args.request, repo, args.agent, args.new))
