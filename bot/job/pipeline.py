"""Where the pieces meet: one job from 👀 to the answer and the session map (steps 9-19 of one
comment's path in docs/architecture.md).

    ctx = Job(spec=spec, ..., mode=GitHubMode(thread))   # built by the worker, the Action or `bot run` (LocalMode)
    status = await run(job_run, ctx, cancel)       # "done" | "failed" | "cancelled"; always a terminal text

Steps: acknowledge → tracking comment → permission → worktree (bot.workspace) → agent, credentials
(bot.credentials) → episode in the sandbox behind the bridge (bot.episode.runner, bot.bridge, sandbox)
→ effects (bot.workspace.effects) → answer with provenance (bot.record.provenance) → session map
(bot.job.conversations). Where the steps differ by where the job came from, `ctx.mode` decides
(bot.job.modes).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging

from adapters import base
from adapters.base import Result, Tier
from bot import retry
from bot.db import Database
from bot.episode.progress import Progress
from bot.episode.session_home import following
from bot.episode.stop import Stop
from bot.episode.turn import Turn
from bot.github.client import transient
from bot.job import answer, authority, conversations, fallback, replies, review_job
from bot.job.context import Job
from bot.job.run import JobRun, end_because, stopped_by
from bot.job.tracking import TrackingComment
from bot.job.turns import run_turn
from bot.record.redact import masked_in_logs
from bot.record.secrets import Secrets
from bot.review.findings import Collector
from bot.workspace.outcome import Outcome
from bot.workspace.repo_config import ConfigError, RepoConfig
from bot.workspace.worktrees import Worktree

log = logging.getLogger("bot.job.pipeline")


async def run(db: Database, ctx: Job, cancel: asyncio.Event, *, secrets: Secrets | None = None) -> str:
    """Run one episode job to a terminal comment. Returns the job's final status. `cancel` stops
    it; a `JobSignal` also names who stopped it and hears why it ended early. `secrets`: the job's,
    when the caller masks with them after the job."""
    job_run = JobRun.begin(db, ctx, secrets)
    with masked_in_logs(job_run.secrets):
        try:
            return await _run(job_run, ctx, cancel)
        finally:  # every event of the job is stored before the worker marks it finished
            await job_run.recorder.flushed()


async def _run(job_run: JobRun, ctx: Job, cancel: asyncio.Event) -> str:
    conversations.ensure(job_run.db, ctx.conversation)
    tracking = job_run.tracking
    try:
        await ctx.mode.acknowledge(ctx)
        await tracking.start(_first_header(ctx))
    except Exception as exc:  # the acknowledgement failed: still try to answer below
        log.warning("acknowledgement failed: %s", exc)
    try:
        text, status = await _execute(job_run, ctx, cancel)
    except Stop as stop:  # the job ends here: why, in a few words, for the worker's outcome line
        text, status = stop.text, stop.status
        if stop.because:
            end_because(cancel, stop.because)
    except asyncio.CancelledError:
        text, status = replies.shutting_down(), "cancelled"
        await _finish_quietly(tracking, text)
        raise
    except Exception as exc:
        log.exception("job for %s failed", ctx.conversation)
        text, status = replies.run_failed(exc), "failed"
    await deliver_final(tracking, text)
    return status


def _first_header(ctx: Job) -> str:
    """Names the agent only when the command did: otherwise `.github/bot.yml`, read once the
    workspace is ready, may choose another than the operator's default (`_execute` names it then)."""
    return f"**{ctx.agent}** is on it for @{ctx.requester}." if ctx.agent else f"On it for @{ctx.requester}."


async def deliver_final(tracking: TrackingComment, text: str) -> None:
    """The terminal edit is what the job is for: when GitHub or the network still fails after the
    edit's own retries, wait and try again for a few minutes before the answer is given up."""
    await retry.retrying(lambda: tracking.finish(text), retry.FINAL_ANSWER, worth_retrying=transient,
                         what="posting the answer")


async def _finish_quietly(tracking: TrackingComment, text: str) -> None:
    with contextlib.suppress(Exception):
        await asyncio.shield(tracking.finish(text))


async def _execute(job_run: JobRun, ctx: Job, cancel: asyncio.Event) -> tuple[str, str]:
    mode, tracking = ctx.mode, job_run.tracking
    if cancel.is_set():
        raise Stop(replies.stopped(stopped_by(cancel), started=False), "cancelled")
    permission = await mode.permission(ctx)
    try:
        worktree = await mode.worktree(ctx)
    except ConfigError as exc:
        raise Stop(exc.comment()) from exc
    try:
        if permission is not None and not (verdict := authority.decide(ctx.requester, permission,
                                                                        worktree.config)).allowed:
            raise Stop(replies.not_allowed(verdict.levels))
        if ctx.review:
            return await review_job.run(job_run, ctx, worktree, cancel, choose=_choose_agent,
                                        episode=_episode_or_the_next_agent)
        agent = _choose_agent(ctx, worktree.config)
        tracking.header = f"**{agent}** is on it for @{ctx.requester}."
        await tracking.note(f"workspace ready at `{worktree.base_sha[:7]}`")
        before = await mode.changes_before(worktree)
        turn = await _episode_or_the_next_agent(job_run, ctx, worktree, agent, tracking, cancel, follow=True)
        agent = turn.agent or agent  # another agent answered when the first one's provider could not
        if cancel.is_set():
            raise Stop(replies.stopped(stopped_by(cancel), started=True), "cancelled")
        outcome = await mode.effects(ctx, worktree, agent, turn)
        _record_effects(job_run, ctx, turn.run_id, outcome)
        conversations.record_turn(job_run.db, ctx.conversation, agent, turn.result.session_id,
                                  fresh=not turn.resumed)
        touched = await mode.changed_since(worktree, before)
        return answer.compose(job_run, ctx, agent, turn, outcome, touched), "done" if turn.result.ok else "failed"
    finally:
        await mode.release(worktree)


def _choose_agent(ctx: Job, cfg: RepoConfig) -> str:
    agent = ctx.agent or cfg.agent(ctx.settings.default_agent)
    if agent not in base.names():
        raise Stop(replies.agent_not_available(agent, base.names()))
    if not cfg.allows_agent(agent):
        raise Stop(replies.agent_not_allowed(agent, cfg.allowed_agents))
    return agent


async def _episode_or_the_next_agent(job_run: JobRun, ctx: Job, worktree: Worktree, agent: str,
                                     tracking: Progress, cancel: asyncio.Event, *, follow: bool = False,
                                     findings: Collector | None = None) -> Turn:
    """The turn on `agent`; when the relay saw its provider unable to serve, on the repository's next
    `fallback` agent, fresh with the thread's recap (bot/job/fallback.py). `follow`: each agent's
    CLI home is restored and stored around its episode (a review's agents share the job's).
    `findings`: a review episode's collector, whose bridge offers the review tools."""

    async def attempt(name: str, fresh_reason: str | None) -> Turn:
        async def episode() -> Turn:
            if fresh_reason is None:
                return await _episode_with_fallback(job_run, ctx, worktree, name, tracking, cancel, findings)
            return await run_turn(job_run, ctx, worktree, name, tracking, cancel, resume_id=None,
                                  fresh_reason=fresh_reason, findings=findings)
        if not follow:
            return await episode()
        return await following(job_run.db, ctx.settings, ctx.conversation, name, tracking.note, episode,
                               limit=ctx.settings.whole("BOT_SESSION_MAX_BYTES"))

    return await fallback.run(job_run, ctx, worktree.config, agent, tracking, cancel, attempt=attempt,
                              findings=findings)


async def _episode_with_fallback(job_run: JobRun, ctx: Job, worktree: Worktree, agent: str,
                                 tracking: Progress, cancel: asyncio.Event, findings: Collector | None) -> Turn:
    """Resume the thread's session; when the CLI no longer knows it, start fresh with a recap."""
    resume_id = None if ctx.new_session else conversations.resume_id(job_run.db, ctx.conversation, agent)
    reason = "`new` was asked" if ctx.new_session else conversations.collected_reason(job_run.db, ctx.conversation)
    turn = await run_turn(job_run, ctx, worktree, agent, tracking, cancel, resume_id=resume_id,
                          fresh_reason=reason, findings=findings)
    if turn.resumed and not cancel.is_set() and _session_lost(turn.result):
        log.info("session %s unknown to %s; starting fresh", resume_id, agent)
        conversations.forget(job_run.db, ctx.conversation, agent)
        await tracking.note("previous session not found; starting fresh with a recap")
        turn = await run_turn(job_run, ctx, worktree, agent, tracking, cancel, resume_id=None,
                              fresh_reason="the previous session was no longer known to the CLI", findings=findings)
    return turn


def _session_lost(result: Result) -> bool:
    """Only the CLI saying it does not know the session loses it: any other failure (a blank
    request, a rejected key, a crash) keeps the thread's session for the next turn."""
    return getattr(result, "failure", None) == "session_unknown"


def _record_effects(job_run: JobRun, ctx: Job, run_id: str, outcome: Outcome | None) -> None:
    """The bot's own commit, push and pull request are enforced acts of this run."""

    if outcome is None or not outcome.commit_sha:
        return
    recorder = job_run.recorder
    recorder.record(run_id, Tier.ENFORCED, "commit", outcome=outcome.kind, raw=outcome.commit_sha)
    if outcome.kind in ("pushed", "pull_request"):
        recorder.record(run_id, Tier.ENFORCED, "push", outcome=outcome.branch or "", raw=outcome.commit_sha)
    if outcome.pr_number:
        recorder.record(run_id, Tier.ENFORCED, "pull_request", outcome=str(outcome.pr_number),
                        raw=outcome.pr_url or "")
