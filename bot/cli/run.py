"""`bot run "<request>" [--agent NAME] [--repo PATH] [--new] [--plain | --json]`: the same pipeline
on a local repository. Progress goes to stderr (a live status line on a terminal), the answer and
a short provenance summary to stdout (bot/cli/render.py). Changes the agent makes through the
bridge land in that checkout; nothing is committed or pushed. The thread is the repository
itself, so the next `bot run` in it resumes the same session.

Everything that can be known before the agent starts is checked first, each with one line that
says what to do: a blank request, the settings, the repository path, the agent's CLI and its
credentials. Nothing runs, and no session is touched, when one of them is wrong.
The folder's state is asked of git first (bot/cli/local_folder.py). Ctrl-C ends the run with one
line and records it stopped; a run whose process was killed is recorded interrupted by the next
`bot run` (bot/cli/local_runs.py).
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import logging
import os
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path

from adapters import base as adapters
from adapters.base import Tier
from bot import config
from bot.cli import local_runs, preflight
from bot.cli.local_folder import RunRefused, checkout
from bot.cli.render import Terminal
from bot.config import Settings
from bot.credentials import resolve as credentials
from bot.db import Database
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import conversations, pipeline
from bot.job.context import Job
from bot.job.modes import LocalMode
from bot.record import provenance
from bot.record.provenance import Provenance
from bot.record.recorder import Recorder
from bot.record.redact import install_log_redaction, redact
from bot.record.secrets import Secrets
from bot.service import store
from bot.settings import manifest
from bot.workspace import repo_config
from sandbox.limits import raise_open_files_limit

PROG = "bot run"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Run one request against a local git repository: "
                                "the agent works in your checkout (nothing is committed), the answer is "
                                "printed. The next run in the same repository resumes the session.")
    p.add_argument("request", help="what to ask the agent (quote it)")
    p.add_argument("--agent", choices=adapters.names(), default=None,
                   help="agent CLI to run (default: the repository's .github/bot.yml, else BOT_DEFAULT_AGENT)")
    p.add_argument("--repo", default=".", help="the repository, or any folder inside it (default: .)")
    p.add_argument("--new", action="store_true", help="start a fresh session instead of resuming this repository's")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--plain", action="store_true",
                       help="plain progress lines, no status line redrawn in place "
                       "(the default when not on a terminal)")
    shown.add_argument("--json", action="store_true",
                       help="print one JSON object (status, answer, steps, tools, provenance) on stdout")
    return p


def is_blank(request: str) -> bool:
    """Nothing to ask: only spaces, line breaks, control or invisible format characters."""
    return all(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf") for ch in request)


def chosen_agent(asked: str | None, repo: Path, operator_default: str) -> str:
    """The agent the pipeline will pick (bot.job.pipeline._choose_agent), checked before it starts."""
    try:
        agent = asked or repo_config.load(repo).agent(operator_default)
    except repo_config.ConfigError as exc:
        raise RunRefused(f".github/bot.yml: {exc}") from exc
    if agent not in adapters.names():
        raise RunRefused(f"unknown agent {agent!r} (from BOT_DEFAULT_AGENT or .github/bot.yml); "
                      f"use one of {', '.join(adapters.names())}")
    return agent


def check_ready(agent: str, repo: Path, settings: Settings) -> list[str]:
    """The agent's CLI is installed and credentials resolve the way the episode will resolve them;
    returns their secret values (kept out of anything written)."""
    missing = preflight.missing_binary(agent, settings.operator_for(agent))
    if missing:
        raise RunRefused(missing)
    found = credentials.resolve(settings, agent, None, None, None)
    if found is None:
        names = " or ".join(credentials.operator_env_names(settings, agent)) or "its API key"
        raise RunRefused(f"no credentials for {agent}: set {names} in your environment "
                      f"(`bot doctor` shows what each agent would use)")
    return list(found.secret_values())


def local_repo_name(repo: Path) -> str:
    return f"local/{repo.name}"


def conversation_of(repo: Path) -> str:
    return f"local:{repo}"


def context(request: str, repo: Path, agent: str | None, new: bool, term: Terminal, settings: Settings,
            on_answer: Callable[[str, Provenance], None] | None = None) -> Job:
    """`on_answer`: what receives the answer and its provenance (default: the terminal)."""
    asked = JobSpec(repo=local_repo_name(repo), number=0, author=getpass.getuser(),  # 0: no issue answered in
                    command=Command(kind="run", agent=agent, new_session=new, request=request))
    return Job(spec=asked, conversation=conversation_of(repo), surface=term, settings=settings,
               mode=LocalMode(repo, on_answer=on_answer or term.answer), progress_interval_s=0.5)


async def run_local(request: str, repo: Path, agent: str | None, new: bool, term: Terminal, data_dir: Path,
                    settings: Settings) -> int:
    db = store.connect(settings=settings)
    local_runs.sweep(Recorder(db), data_dir)  # runs a killed `bot run` left "running"
    secrets = Secrets()
    ctx = context(request, repo, agent, new, term, settings, on_answer=request_first(db, term, request, secrets))
    conversations.ensure(db, ctx.conversation)
    ticker = asyncio.create_task(term.tick())
    try:
        status = await pipeline.run(db, ctx, asyncio.Event(), secrets=secrets)
    except asyncio.CancelledError:  # Ctrl-C: the sandbox is gone, the screen is left clean
        term.abandon()
        logging.getLogger("asyncio").setLevel(logging.CRITICAL)  # tasks cancelled mid-shutdown are not news
        raise
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
    term.close(status)
    return 0 if status == "done" else 1


def request_first(db: Database, term: Terminal, request: str, secrets: Secrets) -> Callable[[str, Provenance], None]:
    """The terminal's answer, with the request recorded before it is shown (for `bot runs`): the
    provenance's counts are then read again from the record, so they are `bot runs show`'s."""
    def answered(text: str, prov: Provenance) -> None:
        recorder = Recorder(db, secrets=secrets)
        recorder.record(prov.run_id, Tier.ENFORCED, "request", raw=request)
        counted = provenance.tier_summary(recorder.events(prov.run_id), prov.egress)
        prov.tiers = json.loads(recorder.redact(json.dumps(counted)))  # masked as the rest of it was
        term.answer(text, prov)
    return answered


def main(argv: list[str]) -> int:
    raise_open_files_limit()  # first thing: one episode's connections must not starve the process
    args = parser().parse_args(argv)
    if is_blank(args.request):
        parser().print_usage(sys.stderr)
        print(f"{PROG}: the request is empty: say what the agent should do, e.g. "
              f"{PROG} \"explain what this repository does\"", file=sys.stderr)
        return 2
    data_dir = preflight.use_user_data_dir()
    try:
        settings = manifest.load_settings(os.environ)
        preflight.check_settings(settings)
        found = checkout(args.repo)
        repo = found.top
        agent = chosen_agent(args.agent, repo, settings.default_agent)
        secrets = check_ready(agent, repo, settings)
    except (RunRefused, config.MissingConfig) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    preflight.quiet_logging(settings)
    install_log_redaction()
    credentials.speak_to_the_terminal()
    term = Terminal(live=Terminal.wants_live(args.plain), as_json=args.json)
    term.noted(f"base: {found.base}")
    with local_runs.alive(data_dir, conversation_of(repo), redact(args.request, secrets)) as marker:
        try:
            return asyncio.run(run_local(args.request, repo, args.agent, args.new, term, data_dir, settings))
        except KeyboardInterrupt:
            local_runs.end_own(Recorder(store.connect(settings=settings), secrets=secrets), data_dir, marker, "stopped")
            print(f"{PROG}: stopped; the repository's session is kept for the next run", file=sys.stderr)
            return 130
