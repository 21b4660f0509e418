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
import sys
from pathlib import Path

from bot import config
from bot.job import conversations, pipeline
from bot.job.modes import LocalMode
from bot.record.redact import install_log_redaction
from bot.service import store
from sandbox.limits import raise_open_files_limit


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


def context(request: str, repo: Path, agent: str | None, new: bool, surface) -> pipeline.JobContext:
    key = f"local:{repo}"
    return pipeline.JobContext(conversation=key, repo=f"local/{repo.name}", request=request,
                               requester=getpass.getuser(), surface=surface, agent=agent,
                               new_session=new, mode=LocalMode(repo), progress_interval_s=0.5)


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
    logging.basicConfig(level=config.env("BOT_LOG_LEVEL"))
    install_log_redaction()
    repo = Path(args.repo).resolve()
    if not (repo / ".git").exists():
        print(f"bot run: {repo} is not a git repository", file=sys.stderr)
        return 2
    return asyncio.run(run_local(args.request, repo, args.agent, args.new))
