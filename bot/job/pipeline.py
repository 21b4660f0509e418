"""Where the pieces meet (DESIGN §2): one job from 👀 to the answer and the session map.

    ctx = JobContext(...)                      # built by the worker (GitHub) or bot.local (terminal)
    status = await run(db, ctx, cancel)       # "done" | "failed" | "cancelled"; always a terminal text

Steps: acknowledge → tracking comment → permission → worktree (bot.workspace) → agent, credentials
(bot.credentials) → episode in the sandbox behind the bridge (bot.runner, bot.bridge, sandbox) →
effects (bot.effects) → answer with provenance (bot.provenance) → session map (bot.conversations).
"""
from __future__ import annotations

import asyncio
import contextlib
import logging

from bot import config, retry
from bot.job import answer
from bot.job import conversations
from bot.job.episode import Turn, run_turn
from bot.job.context import JobContext, Stop
from bot.record.redact import masked_in_logs
from bot.job.tracking import TrackingComment

log = logging.getLogger("bot.job.pipeline")


async def run(db, ctx: JobContext, cancel: asyncio.Event) -> str:
    """Run one episode job to a terminal comment. Returns the job's final status."""
    with masked_in_logs(ctx.secrets):
        return await _run(db, ctx, cancel)


async def _run(db, ctx: JobContext, cancel: asyncio.Event) -> str:
    conversations.ensure(db, ctx.conversation)
    if ctx.token and ctx.token not in ctx.secrets:  # a git error message must not leak it
        ctx.secrets.append(ctx.token)
    tracking = TrackingComment(ctx.surface, lambda: ctx.secrets, handle=ctx.tracking_handle,
                               on_created=ctx.on_tracking_created, interval_s=ctx.progress_interval_s)
    try:
        await _acknowledge(ctx)
        await tracking.start(f"**{ctx.agent or config.default_agent()}** is on it for @{ctx.requester}.")
    except Exception as exc:  # the acknowledgement failed: still try to answer below
        log.warning("acknowledgement failed: %s", exc)
    try:
        text, status = await _execute(db, ctx, tracking, cancel)
    except Stop as stop:
        text, status = stop.text, stop.status
    except asyncio.CancelledError:
        text, status = "⏹️ Stopped: the service is shutting down; this request will run again.", "cancelled"
        await _finish_quietly(tracking, text)
        raise
    except Exception as exc:
        log.exception("job for %s failed", ctx.conversation)
        text, status = f"❌ The run failed: {type(exc).__name__}: {exc}", "failed"
    await deliver_final(tracking, text)
    return status


async def deliver_final(tracking: TrackingComment, text: str) -> None:
    """The terminal edit is what the job is for: when GitHub or the network still fails after the
    edit's own retries, wait and try again for a few minutes before the answer is given up."""
    from bot.github.client import transient
    await retry.retrying(lambda: tracking.finish(text), retry.FINAL_ANSWER, worth_retrying=transient,
                         what="posting the answer")


async def _finish_quietly(tracking: TrackingComment, text: str) -> None:
    with contextlib.suppress(Exception):
        await asyncio.shield(tracking.finish(text))


async def _acknowledge(ctx: JobContext) -> None:
    if ctx.thread is not None and ctx.target:
        from bot.github.client import with_retries
        await with_retries(lambda: ctx.thread.react(ctx.target, "eyes"))


async def _execute(db, ctx: JobContext, tracking: TrackingComment, cancel: asyncio.Event) -> tuple[str, str]:
    from bot.workspace import worktrees as workspace
    from bot.workspace.repo_config import ConfigError

    if cancel.is_set():
        raise Stop(f"⏹️ Stopped before it started, at @{ctx.requester}'s request."
                   if ctx.thread else "⏹️ Stopped before it started.", "cancelled")
    permission = await _permission(ctx)
    try:
        worktree = await _worktree(ctx)
    except ConfigError as exc:
        raise Stop(exc.comment())
    try:
        if permission is not None and not worktree.config.may_trigger(permission):
            raise Stop(not_allowed_text(worktree.config.trigger_permissions))
        agent = _choose_agent(ctx, worktree.config)
        tracking.header = f"**{agent}** is on it for @{ctx.requester}."
        await tracking.note(f"workspace ready at `{worktree.base_sha[:7]}`")
        dirty_before = await _dirty_paths(ctx, worktree)
        turn = await _episode_with_fallback(db, ctx, worktree, agent, tracking, cancel)
        if cancel.is_set():
            raise Stop(f"⏹️ Stopped at @{ctx.requester}'s request" if ctx.thread else "⏹️ Stopped.", "cancelled")
        outcome = await _effects(ctx, worktree, agent, turn)
        _record_effects(db, ctx, turn.run_id, outcome)
        conversations.record_turn(db, ctx.conversation, agent, turn.result.session_id,
                                  fresh=not turn.resumed)
        touched = sorted(await _dirty_paths(ctx, worktree) - dirty_before) if ctx.local_repo else None
        return answer.compose(db, ctx, agent, turn, outcome, touched), "done" if turn.result.ok else "failed"
    finally:
        if ctx.local_repo is None:
            await workspace.remove(worktree)


async def _permission(ctx: JobContext) -> str | None:
    from bot.github.client import transient
    if ctx.thread is None:
        return None  # local mode trusts the person at the terminal
    try:
        return await ctx.thread.permission(ctx.requester)
    except Exception as exc:
        lead = f"❌ I could not check @{ctx.requester}'s permission on {ctx.repo}, so nothing was run"
        if transient(exc):
            raise Stop(f"{lead}: GitHub did not answer ({type(exc).__name__}: {exc}). Please ask again "
                       "in a few minutes.")
        raise Stop(f"{lead}: GitHub answered “{exc}”. The bot's GitHub App needs the **Metadata: read** "
                   "permission on this repository; an organization or repository admin can grant it in "
                   "the App's installation settings, then ask again.")


def not_allowed_text(levels: tuple[str, ...] = ("write", "maintain", "admin")) -> str:
    return (f"Sorry, only people with {' or '.join(levels)} permission on this repository can "
            f"ask me to run an agent here.")


async def _worktree(ctx: JobContext):
    from bot.workspace import worktrees as workspace
    if ctx.local_repo is not None:
        from bot.cli.run import local_worktree
        return await local_worktree(ctx.local_repo, ctx.conversation)
    return await workspace.prepare(ctx.repo, ctx.conversation, token=ctx.token,
                                   pull_number=ctx.number if ctx.is_pr else None)


def _choose_agent(ctx: JobContext, cfg) -> str:
    from adapters import base
    agent = ctx.agent or cfg.agent()
    if agent not in base.names():
        raise Stop(f"The agent `{agent}` is not available here. Available: "
                   + ", ".join(f"`{n}`" for n in base.names()))
    if not cfg.allows_agent(agent):
        raise Stop(f"This repository does not allow `{agent}` (`.github/bot.yml` allows "
                   + ", ".join(f"`{n}`" for n in cfg.allowed_agents) + ").")
    return agent


async def _episode_with_fallback(db, ctx, worktree, agent, tracking, cancel) -> Turn:
    """Resume the thread's session; when the CLI no longer knows it, start fresh with a recap."""
    previous = None if ctx.new_session else conversations.session(db, ctx.conversation, agent)
    resume_id = previous.session_id if previous else None
    reason = "`new` was asked" if ctx.new_session else None
    turn = await run_turn(db, ctx, worktree, agent, tracking, cancel, resume_id=resume_id,
                          fresh_reason=reason)
    if turn.resumed and not cancel.is_set() and _session_lost(turn.result):
        log.info("session %s unknown to %s; starting fresh", resume_id, agent)
        conversations.forget(db, ctx.conversation, agent)
        await tracking.note("previous session not found; starting fresh with a recap")
        turn = await run_turn(db, ctx, worktree, agent, tracking, cancel, resume_id=None,
                              fresh_reason="the previous session was no longer known to the CLI")
    return turn


def _session_lost(result) -> bool:
    """The CLI said it does not know the session, or a resumed run failed without any answer
    for no other stated reason (a rejected key or a timeout is not a lost session)."""
    failure = getattr(result, "failure", None)
    if failure == "session_unknown":
        return True
    return (not result.ok and not (result.text or "").strip()
            and failure not in ("auth", "provider", "refused", "timeout", "killed", "bridge", "cancelled", "config"))


async def _effects(ctx: JobContext, worktree, agent: str, turn: Turn):
    if ctx.local_repo is not None or not turn.result.ok or ctx.thread is None:
        return None
    from bot.workspace import effects
    await refresh_token(ctx)
    pull = await ctx.thread.pull() if ctx.is_pr else None
    request = effects.Request(agent=agent, text=ctx.request, requester_login=ctx.requester,
                              requester_id=ctx.requester_id, number=ctx.number or 0,
                              title=ctx.title, pull=pull)
    return await effects.apply(worktree, request, ctx.thread.api, token=ctx.token)


async def refresh_token(ctx: JobContext) -> None:
    """A long run can outlive the installation token it started with (one hour): renew it before
    the push and the pull request, and redact the new one too."""
    fresh = getattr(ctx.thread, "fresh_token", None)
    if fresh is None:
        return
    ctx.token = await fresh() or ctx.token
    if ctx.token and ctx.token not in ctx.secrets:
        ctx.secrets.append(ctx.token)


def _record_effects(db, ctx: JobContext, run_id: str, outcome) -> None:
    """The bot's own commit, push and pull request are enforced acts of this run."""
    from adapters.base import Tier
    from bot.record.recorder import Recorder

    if outcome is None or not outcome.commit_sha:
        return
    recorder = Recorder(db, secrets=ctx.secrets)
    recorder.record(run_id, Tier.ENFORCED, "commit", outcome=outcome.kind, raw=outcome.commit_sha)
    if outcome.kind in ("pushed", "pull_request"):
        recorder.record(run_id, Tier.ENFORCED, "push", outcome=outcome.branch or "", raw=outcome.commit_sha)
    if outcome.pr_number:
        recorder.record(run_id, Tier.ENFORCED, "pull_request", outcome=str(outcome.pr_number),
                        raw=outcome.pr_url or "")


async def _dirty_paths(ctx: JobContext, worktree) -> set[str]:
    """Local mode changes the user's own checkout: the paths git shows as changed."""
    if ctx.local_repo is None:
        return set()
    from bot.cli.run import dirty_paths
    return await dirty_paths(worktree)
