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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable

from bot import config, conversations
from bot.defang import defang
from bot.tracking import Surface, TrackingComment

log = logging.getLogger("bot.pipeline")
MAX_ANSWER_CHARS = 50_000
FINAL_RETRY_S = (5.0, 15.0, 30.0, 60.0, 120.0)  # the terminal edit's patience after its own retries
MIN_DIFF_CHARS = 500  # below this a cut diff is not worth showing
FIT_MARGIN_CHARS = 1_000  # redaction may lengthen the text a little


class Stop(Exception):
    """End the job now with this terminal text."""

    def __init__(self, text: str, status: str = "failed"):
        super().__init__(text)
        self.text, self.status = text, status


@dataclass
class JobContext:
    conversation: str
    repo: str
    request: str
    requester: str
    surface: Surface
    agent: str | None = None
    new_session: bool = False
    number: int | None = None
    requester_id: int = 0
    title: str = ""
    is_pr: bool = False
    thread: Any = None  # bot.github.Thread; None in local mode
    token: str | None = None  # installation token for git and effects; never reaches the agent
    installation_id: int | None = None
    target: dict | None = None  # the triggering comment, for the 👀 reaction
    tracking_handle: int | None = None
    on_tracking_created: Callable[[int], Awaitable[None] | None] | None = None
    local_repo: Path | None = None  # local mode: the repository to work in, no effects
    job_id: int | None = None
    progress_interval_s: float = 3.0
    secrets: list[str] = field(default_factory=list)


@dataclass
class Turn:
    """What one episode produced, for the answer and the session map."""

    result: Any
    run_id: str
    resumed: bool
    fresh_reason: str | None
    version: str | None


async def run(db, ctx: JobContext, cancel: asyncio.Event) -> str:
    """Run one episode job to a terminal comment. Returns the job's final status."""
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
    from bot.github import transient
    for delay in (*FINAL_RETRY_S, None):
        try:
            return await tracking.finish(text)
        except Exception as exc:
            if delay is None or not transient(exc):
                raise
            log.warning("posting the answer failed (%s: %s); again in %.0f s", type(exc).__name__, exc, delay)
            await asyncio.sleep(delay)


async def _finish_quietly(tracking: TrackingComment, text: str) -> None:
    with contextlib.suppress(Exception):
        await asyncio.shield(tracking.finish(text))


async def _acknowledge(ctx: JobContext) -> None:
    if ctx.thread is not None and ctx.target:
        from bot.github import with_retries
        await with_retries(lambda: ctx.thread.react(ctx.target, "eyes"))


async def _execute(db, ctx: JobContext, tracking: TrackingComment, cancel: asyncio.Event) -> tuple[str, str]:
    from bot import workspace
    from bot.repo_config import ConfigError

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
        dirty_before = await _dirty_paths(ctx)
        turn = await _episode_with_fallback(db, ctx, worktree, agent, tracking, cancel)
        if cancel.is_set():
            raise Stop(f"⏹️ Stopped at @{ctx.requester}'s request" if ctx.thread else "⏹️ Stopped.", "cancelled")
        outcome = await _effects(ctx, worktree, agent, turn)
        _record_effects(db, ctx, turn.run_id, outcome)
        conversations.record_turn(db, ctx.conversation, agent, turn.result.session_id,
                                  fresh=not turn.resumed)
        touched = sorted(await _dirty_paths(ctx) - dirty_before) if ctx.local_repo else None
        return _answer(db, ctx, agent, turn, outcome, touched), "done" if turn.result.ok else "failed"
    finally:
        if ctx.local_repo is None:
            await workspace.remove(worktree)


async def _permission(ctx: JobContext) -> str | None:
    from bot.github import transient
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
    from bot import workspace
    if ctx.local_repo is not None:
        from bot.local import local_worktree
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
    from bot import effects
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
    from bot.record import Recorder

    if outcome is None or not outcome.commit_sha:
        return
    recorder = Recorder(db, secrets=ctx.secrets)
    recorder.record(run_id, Tier.ENFORCED, "commit", outcome=outcome.kind, raw=outcome.commit_sha)
    if outcome.kind in ("pushed", "pull_request"):
        recorder.record(run_id, Tier.ENFORCED, "push", outcome=outcome.branch or "", raw=outcome.commit_sha)
    if outcome.pr_number:
        recorder.record(run_id, Tier.ENFORCED, "pull_request", outcome=str(outcome.pr_number),
                        raw=outcome.pr_url or "")


async def _dirty_paths(ctx: JobContext) -> set[str]:
    """Local mode changes the user's own checkout: the paths git shows as changed."""
    if ctx.local_repo is None:
        return set()
    from bot.gitops import git
    status = await git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=ctx.local_repo)
    return {entry[3:] for entry in status.split("\0") if len(entry) > 3}


def _answer(db, ctx: JobContext, agent: str, turn: Turn, outcome, touched: list[str] | None = None) -> str:
    from bot import provenance
    from bot.record import Recorder

    result = turn.result
    text = defang(result.text.strip()) if result.text else ""
    if not result.ok:
        text = f"❌ {agent} did not finish: {result.error or 'no answer'}" + (f"\n\n{text}" if text else "")
    elif not text:
        text = f"⚠️ {agent} finished without an answer."
    prov = provenance.build(Recorder(db, secrets=ctx.secrets), turn.run_id, agent=agent, version=turn.version,
                            resumed=turn.resumed, fresh_reason=turn.fresh_reason,
                            duration_s=result.duration_s, usage=result.usage,
                            files_changed=list(outcome.files) if outcome else (touched or []),
                            session_id=result.session_id,
                            commit=outcome.commit_sha if outcome else None,
                            pr_url=outcome.pr_url if outcome else None,
                            change=outcome.summary() if outcome and outcome.commit_sha else None,
                            status="ok" if result.ok else "failed")
    return prov.render(fit_answer(text, outcome, len(prov.render(""))))


def fit_answer(text: str, outcome, tail_chars: int) -> str:
    """The answer, what happened to the change and its diff, cut so that with the provenance
    (`tail_chars`) the comment stays under GitHub's limit: the provenance is never cut, the
    answer and the diff share what is left (each at least half when both are long)."""
    from bot.tracking import MAX_COMMENT_CHARS

    note = f"\n\n{outcome.message}" if outcome is not None and outcome.kind != "none" else ""
    diff = outcome.diff if note and outcome.diff else ""
    room = MAX_COMMENT_CHARS - tail_chars - len(note) - FIT_MARGIN_CHARS
    wrapper = "\n\n<details><summary>diff</summary>\n\n```diff\n{}\n```\n</details>"
    diff_chars = len(wrapper.format(diff)) if diff else 0
    text = _cut(text, min(MAX_ANSWER_CHARS, max(room - diff_chars, room // 2)), "answer")
    body = text + note
    if diff:
        left = room - len(text) - len(wrapper.format(""))
        if left < MIN_DIFF_CHARS:
            body += "\n\n(The diff is too long to show here.)"
        else:
            body += wrapper.format(_cut(diff, left, "diff", fences=False))
    return body


def _cut(text: str, limit: int, what: str, fences: bool = True) -> str:
    """`text` shortened to at most `limit` characters with a note; a code fence left open by the
    cut is closed so the markdown after it (the provenance) still renders."""
    if len(text) <= limit:
        return text
    suffix = f"\n\n… ({what} truncated)"
    cut = text[:max(limit - len(suffix) - 4, 0)]
    if fences and cut.count("```") % 2:
        cut += "\n```"
    return cut + suffix


async def run_turn(db, ctx: JobContext, worktree, agent: str, tracking: TrackingComment,
                   cancel: asyncio.Event, *, resume_id: str | None, fresh_reason: str | None) -> Turn:
    """One episode: credentials, sandbox config, bridge, runner, record."""
    import sandbox
    from adapters import base
    from bot import credentials
    from bot.admission import Admission
    from bot.bridge import BridgeServer
    from bot.bridge_tools import sandbox_for_run
    from bot.record import Recorder

    adapter = base.get(agent)
    creds = credentials.resolve(agent, ctx.repo, ctx.requester_id or None, ctx.installation_id)
    if creds is None:
        raise Stop(credentials.auth_required_message(agent, ctx.repo))
    ctx.secrets.extend(creds.secret_values())
    resumed = bool(resume_id) and adapter.supports_resume
    spawner = sandbox.select_spawner()
    sandbox_config = _sandbox_config(ctx, worktree, agent, adapter, spawner)
    inside = sandbox_config.mount_path if spawner.tier >= 1 else str(worktree.path)
    recorder = Recorder(db, secrets=ctx.secrets)
    run_id = recorder.start_run(agent=agent, job_id=str(ctx.job_id), conversation=ctx.conversation,
                                mode=worktree.config.mode, sandbox_tier=spawner.tier,
                                limits=vars(sandbox_config.limits), base_commit=worktree.base_sha)
    for gap in getattr(adapter, "unobserved", ()):
        recorder.declare_gap(run_id, gap)
    policy = Admission.from_repo_config(worktree.path, worktree.config, mount_path=inside)
    kill = asyncio.Event()
    async with BridgeServer(worktree.path, policy, recorder, run_id, read_thread=conversations.thread_reader(ctx),
                            run_sandbox=sandbox_for_run(worktree.path, policy),
                            on_progress=tracking.note, on_halt=lambda reason: kill.set(),
                            stop=cancel) as bridge:
        sandbox_config.bridge_upstream = ("127.0.0.1", bridge.port)
        ctx.secrets.append(bridge.token)
        prompt = await conversations.prompt(ctx, resumed, fresh_reason)
        episode = base.Episode(prompt=prompt, workdir=inside, home=sandbox_config.home,
                               tmpdir=sandbox_config.tmpdir, instruction=conversations.standing_instruction(ctx),
                               model=config.agent_model(agent), resume_session=resume_id if resumed else None,
                               bridge=bridge.bridge_for(spawner.inside_bridge_url(sandbox_config)),
                               credentials=creds, mode=worktree.config.mode,
                               base_url=config.agent_base_url(agent))
        result = await _run_with_cancel(adapter, episode, spawner, sandbox_config, recorder, run_id,
                                        tracking, cancel, kill, bridge.connected)
    version = await adapter_version(adapter, spawner)
    recorder.attach_egress(run_id, getattr(result, "egress", None) or [])
    recorder.update_run(run_id, agent_version=version, session_id=result.session_id, resumed=int(resumed))
    recorder.finish_run(run_id, "cancelled" if cancel.is_set() else ("ok" if result.ok else "failed"),
                        {"error": result.error, "exit_code": result.exit_code})
    return Turn(result, run_id, resumed, None if resumed else fresh_reason, version)


async def _run_with_cancel(adapter, episode, spawner, sandbox_config, recorder, run_id, tracking,
                           cancel: asyncio.Event, kill: asyncio.Event, connected: asyncio.Event):
    from bot import runner

    async def forward_cancel():
        await cancel.wait()
        kill.set()

    async def on_event(event) -> None:
        recorder.attest(run_id, event)
        await tracking.on_event(event)

    watcher = asyncio.create_task(forward_cancel())
    try:
        return await runner.run_episode(adapter, episode, spawner, sandbox_config,
                                        on_event=on_event, cancel=kill, bridge_connected=connected)
    finally:
        watcher.cancel()


def _sandbox_config(ctx: JobContext, worktree, agent: str, adapter, spawner):
    from sandbox.base import Limits, SandboxConfig

    cfg = worktree.config
    home = conversations.home_dir(ctx.conversation, agent)
    limits = Limits(memory_bytes=cfg.limits.memory_bytes, timeout_s=cfg.limits.timeout_s, pids=cfg.limits.pids)
    gateway = _host_port(config.agent_base_url(agent))
    return SandboxConfig(workdir=worktree.path, home=home, writable=cfg.mode == "native",
                         allowed_hosts=tuple(adapter.default_allowed_hosts) + tuple(cfg.egress_hosts),
                         gateways=(gateway,) if gateway else (), limits=limits, min_tier=spawner.tier,
                         ro_binds=(config.agents_dir(),), tmpdir=home / ".tmp")


def _host_port(url: str | None) -> str | None:
    from urllib.parse import urlsplit
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


_versions: dict[str, str | None] = {}


async def adapter_version(adapter, spawner) -> str | None:
    """The CLI's version for the provenance, probed once per process."""
    if adapter.name not in _versions:
        def probe(argv):
            import subprocess
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
            return done.returncode, done.stdout + done.stderr
        try:
            _versions[adapter.name] = (await asyncio.to_thread(adapter.detect, probe)).version
        except Exception as exc:
            log.warning("version probe of %s failed: %s", adapter.name, exc)
            _versions[adapter.name] = None
    return _versions[adapter.name]
