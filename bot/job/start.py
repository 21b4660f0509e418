"""The one step from a job's spec to the context the pipeline runs, for the service's worker and the
Action alike. They differ only in what they pass: the service a queued job (its id, its tracking
comment, who stopped it) and an installation, the Action neither.

    ctx = context_for(spec, thread, surface, settings=settings)
"""
from __future__ import annotations

from bot.config import Settings
from bot.github.client import Thread
from bot.intake.spec import JobSpec
from bot.job.context import Job, Queued
from bot.job.conversations import thread_key
from bot.job.modes import GitHubMode
from bot.job.tracking import Surface

__all__ = ["Queued", "context_for"]


def context_for(spec: JobSpec, thread: Thread, surface: Surface, *, settings: Settings,
                installation_id: int | None = None, queued: Queued | None = None) -> Job:
    command = spec.command
    return Job(
        conversation=queued.conversation if queued else thread_key(spec.repo, spec.number),
        repo=spec.repo, request=command.request,
        requester=spec.author, requester_id=spec.author_id or 0, repo_id=spec.repo_id or 0,
        agent=command.agent, new_session=command.new_session, review=command.review, agents=command.agents,
        number=spec.number, title=spec.title or "", is_pr=spec.is_pr, target=dict(spec.target or {}),
        thread=thread, surface=surface, mode=GitHubMode(), installation_id=installation_id,
        progress_interval_s=settings.number("BOT_PROGRESS_INTERVAL"), settings=settings,
        queued=queued)
