"""Another agent when one's provider cannot serve the turn: `fallback: [AGENT, …]` in
`.github/bot.yml`.

    turn = await run(job_run, ctx, cfg, "claude", tracking, cancel, attempt=one_episode)

`attempt(agent, fresh_reason)` runs one episode (fresh_reason None: the thread's own session, as
asked; else a fresh session with the thread's recap). When the relay saw the provider overloaded,
out of quota or rate limited past its retries (`Turn.unavailable`: the bot's own observation,
never the CLI's say-so), the next agent of the list runs the same request in the same worktree
with the same permissions and limits. Each agent is tried at most once and the first never again
(no loop); one that is not an agent here, not allowed by the repository or has no credential is
skipped with the reason, and so is one whose episode is refused before it runs. The answering
run records each earlier attempt (`fallback` events), so its provenance shows what they spent.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable, Sequence

from adapters import base
from adapters.base import Tier
from bot.credentials import resolve as credentials
from bot.db import Database
from bot.episode.progress import Progress
from bot.episode.stop import Stop
from bot.episode.turn import Attempt, Turn
from bot.job import replies
from bot.job.context import Job
from bot.job.run import JobRun
from bot.review.findings import Collector
from bot.workspace.repo_config import RepoConfig

EVENT = "fallback"  # the answering run's record of one earlier attempt
OneEpisode = Callable[[str, str | None], Awaitable[Turn]]


def chain(first: str, fallback: Sequence[str]) -> list[str]:
    """The agents to try after `first`, each once and in order, never `first` again."""
    return [name for name in dict.fromkeys(fallback) if name != first]


def skip_reason(agent: str, ctx: Job, cfg: RepoConfig, db: Database | None = None) -> str | None:
    """Why `agent` cannot take the turn here, or None when it can. `db`: the job's connection."""
    if agent not in base.names():
        return "not an agent of this bot"
    if not cfg.allows_agent(agent):
        return "not in allowed_agents"
    origin = credentials.resolve_origin(ctx.settings, agent, ctx.repo_id or None, ctx.requester_id or None,
                                        ctx.installation_id, db=db)
    return "no credential configured" if origin is None else None


async def run(job_run: JobRun, ctx: Job, cfg: RepoConfig, agent: str, tracking: Progress,
              cancel: asyncio.Event, *, attempt: OneEpisode, findings: Collector | None = None) -> Turn:
    turn = await attempt(agent, None)
    waiting = chain(agent, cfg.fallback)
    tried: list[Attempt] = []
    skipped: list[tuple[str, str]] = []
    while turn.unavailable is not None and not cancel.is_set():
        name = _next_agent(waiting, ctx, cfg, skipped, job_run.db)
        if name is None:
            break
        tried.append(Attempt(turn.agent or agent, turn.run_id, turn.unavailable))
        await tracking.note(f"{replies.unavailable_words(tried[-1].agent, turn.unavailable.kind)}; "
                            f"{name} answers instead")
        if findings is not None:  # a review's findings are the answering agent's
            findings.agent = name
        try:
            turn = await attempt(name, replies.unavailable_words(tried[-1].agent, turn.unavailable.kind))
        except Stop as stop:  # refused before it ran (its credential cannot be used here): the next one
            skipped.append((name, stop.text.strip().splitlines()[0][:200] if stop.text.strip() else "refused"))
            tried.pop()
            continue
        _record(job_run, ctx, turn.run_id, tried)
    return dataclasses.replace(turn, attempts=tuple(tried), skipped=tuple(skipped), fallback=tuple(cfg.fallback))


def _next_agent(waiting: list[str], ctx: Job, cfg: RepoConfig, skipped: list[tuple[str, str]],
                db: Database) -> str | None:
    while waiting:
        name = waiting.pop(0)
        why = skip_reason(name, ctx, cfg, db)
        if why is None:
            return name
        skipped.append((name, why))
    return None


def _record(job_run: JobRun, ctx: Job, run_id: str, tried: list[Attempt]) -> None:
    recorder = job_run.recorder
    for earlier in tried:
        recorder.record(run_id, Tier.ENFORCED, EVENT, tool=earlier.agent, outcome=earlier.unavailable.kind,
                        raw=json.dumps({"agent": earlier.agent, "run": earlier.run_id,
                                        "kind": earlier.unavailable.kind, "status": earlier.unavailable.status}))
