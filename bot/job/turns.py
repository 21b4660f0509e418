"""The job's side of one turn: what it tells the episode of its thread (bot/job/conversations.py,
bot/job/thread_text.py) and the request it builds for bot/episode/turn.py."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.episode import turn as episode
from bot.episode.progress import Progress
from bot.episode.turn import Turn
from bot.job import conversations
from bot.job.context import Job
from bot.job.run import JobRun
from bot.job.thread_text import ThreadContext, attachments_dir
from bot.record.recorder import Recorder
from bot.review.findings import Collector
from bot.workspace.worktrees import Worktree


@dataclass(frozen=True)
class JobThread:
    """The job's thread as the episode reads it (bot.episode.progress.Thread), fetched once."""

    ctx: Job
    context: ThreadContext

    @property
    def folder(self) -> Path | None:
        return self.context.folder

    @property
    def live(self) -> bool:
        return self.ctx.thread is not None

    async def prompt(self, resumed: bool, fresh_reason: str | None) -> str:
        return await conversations.prompt(self.ctx, resumed, fresh_reason, self.context)

    def instruction(self) -> str:
        return conversations.standing_instruction(self.ctx)

    def reader(self) -> Callable[[], Awaitable[str]]:
        return conversations.thread_reader(self.ctx, self.context)

    def record(self, recorder: Recorder, run_id: str) -> None:
        self.context.record(recorder, run_id)


async def run_turn(job_run: JobRun, ctx: Job, worktree: Worktree, agent: str, tracking: Progress,
                   cancel: asyncio.Event, *, resume_id: str | None, fresh_reason: str | None,
                   findings: Collector | None = None) -> Turn:
    """One episode of `agent` for this job; `findings`: a review episode's collector."""
    attachments = attachments_dir(ctx.settings.data_dir, ctx.conversation) if ctx.thread is not None else None
    thread = JobThread(ctx, ThreadContext(ctx, attachments, findings))
    request = episode.EpisodeRequest(asker=ctx, repo=ctx.repo, job_id=ctx.job_id, agent=agent, worktree=worktree,
                                     thread=thread, resume_id=resume_id,
                                     fresh_reason=fresh_reason, findings=findings, labels=ctx.labels)
    return await episode.run_turn(request, job_run.recorder, tracking, cancel)
