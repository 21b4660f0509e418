"""One episode: credentials, sandbox configuration, the bridge, the model channel, the runner, the
record. Entered through `run_turn(request, recorder, progress, cancel)`; the job (bot/job/turns.py)
builds the request, with the thread's prompt and reader, and hears of the run through `progress`.
Nothing here knows a GitHub thread."""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import sandbox
from adapters import base
from bot.bridge.server import BridgeServer
from bot.bridge.tool import Labeler
from bot.bridge.tools import sandbox_for_run
from bot.config import MissingConfig, Settings
from bot.credentials import resolve as credentials
from bot.credentials import usage as credential_use
from bot.episode import cli_version, honesty, loader_guard, runner, session_home
from bot.episode.asker import Asker
from bot.episode.model_channel import model_channel
from bot.episode.pace import LinePace
from bot.episode.progress import Progress, Thread
from bot.episode.stop import Stop
from bot.record.provenance import web_access_gap
from bot.record.recorder import Recorder
from bot.relay.unavailable import ProviderUnavailable, observed
from bot.review.findings import Collector
from bot.workspace.repo_config import RepoLimits, size_bytes
from bot.workspace.worktrees import Worktree
from sandbox.base import Limits, SandboxConfig, Spawner

log = logging.getLogger("bot.episode.turn")


@dataclass(frozen=True)
class Attempt:
    """An episode whose provider could not serve it, before another agent answered."""

    agent: str
    run_id: str
    unavailable: ProviderUnavailable


@dataclass
class Turn:
    """What one episode produced, for the answer and the session map."""

    result: base.Result
    run_id: str
    resumed: bool
    fresh_reason: str | None
    version: str | None
    agent: str = ""  # who ran it (another than asked when a fallback answered)
    unavailable: ProviderUnavailable | None = None  # the relay saw the provider unable to serve it
    attempts: tuple[Attempt, ...] = ()  # the agents tried before this one (bot/job/fallback.py)
    skipped: tuple[tuple[str, str], ...] = ()  # fallback agents not tried, with why
    fallback: tuple[str, ...] = ()  # the repository's `fallback` list


@dataclass(frozen=True)
class EpisodeRequest:
    """One turn asked of one agent: who asks (settings, thread key, whose credentials), where (the
    worktree), whether it resumes, what it is told of the thread, and a review's collector."""

    asker: Asker
    repo: str  # the repository's name, for the words of a refusal
    job_id: int | None
    agent: str
    worktree: Worktree
    thread: Thread
    resume_id: str | None = None
    fresh_reason: str | None = None
    findings: Collector | None = None  # a review episode's: its bridge offers the review tools
    labels: Labeler | None = None  # a run that may label its issue: its bridge offers add_labels


async def run_turn(request: EpisodeRequest, recorder: Recorder, tracking: Progress, cancel: asyncio.Event) -> Turn:
    """One episode: credentials, sandbox config, bridge, runner, record. `recorder` is the job's,
    holding its secrets: the credentials' and the channels' tokens are added to them here."""
    asker, worktree, agent, thread = request.asker, request.worktree, request.agent, request.thread
    resume_id, fresh_reason = request.resume_id, request.fresh_reason
    adapter = base.get(agent, asker.settings.operator_for(agent))
    origin = credentials.resolve_origin(asker.settings, agent, asker.repo_id or None, asker.requester_id or None,
                                        asker.installation_id, db=recorder.db)
    if origin is None:
        raise Stop(credentials.auth_required_message(asker.settings, agent, request.repo), because="no credentials")
    creds = origin.credentials
    recorder.secrets.extend(creds.secret_values())
    resumed = bool(resume_id) and adapter.supports_resume
    spawner = sandbox.select_spawner(asker.settings.sandbox_tier, asker.settings.sandbox_host)
    sandbox_config = _sandbox_config(asker, worktree, agent, adapter, spawner, thread.folder)
    inside = sandbox_config.mount_path if spawner.tier >= 1 else str(worktree.path)
    read_dirs = (str(thread.folder),) if thread.folder else ()  # bound at the same path inside
    run_id = recorder.start_run(agent=agent, job_id=None if request.job_id is None else str(request.job_id),
                                conversation=asker.conversation, mode=worktree.config.mode, sandbox_tier=spawner.tier,
                                limits=vars(sandbox_config.limits), base_commit=worktree.base_sha)
    if thread.live and (url := asker.settings.run_url(run_id)):  # the run's live page (bot/web/run_page.py)
        tracking.link_live(url)
    credential_use.note(recorder.db, run_id, origin)
    if worktree.config.web_access:
        recorder.declare_gap(run_id, web_access_gap(agent))
    policy = loader_guard.bridge_policy(worktree.path, worktree.config, adapter, inside)
    kill = asyncio.Event()
    scratch = asker.settings.data_dir / "runs" / run_id
    async with BridgeServer(worktree.path, policy, recorder, run_id, scratch_root=scratch,
                            read_thread=thread.reader(),
                            run_sandbox=loader_guard.masked_runs(
                                sandbox_for_run(worktree.path, policy, asker.settings.sandbox_tier,
                                                sandbox_config.limits, host=asker.settings.sandbox_host),
                                adapter, worktree.config.mode),
                            on_progress=tracking.plan, on_halt=lambda reason: kill.set(),
                            stop=cancel, read_dirs=read_dirs, review=request.findings,
                            labels=request.labels) as bridge, \
            model_channel(agent, adapter, creds, asker, recorder, run_id, sandbox_config,
                          on_retry=tracking.note, on_stop=lambda reason: kill.set(),
                          repo_budgets=worktree.config.budgets, web_access=worktree.config.web_access,
                          automation=asker.automation_spend) as channel:
        assert bridge.port is not None  # set by __aenter__
        sandbox_config.bridge_upstream = ("127.0.0.1", bridge.port)
        recorder.secrets.add(bridge.token)
        prompt = await thread.prompt(resumed, fresh_reason)
        episode = base.Episode(prompt=prompt, workdir=inside, home=sandbox_config.home,
                               tmpdir=sandbox_config.tmpdir, instruction=thread.instruction(),
                               model=asker.settings.agent_model(agent), resume_session=resume_id if resumed else None,
                               bridge=bridge.bridge_for(spawner.inside_bridge_url(sandbox_config)),
                               credentials=channel.credentials, mode=worktree.config.mode,
                               base_url=channel.base_url, web_access=worktree.config.web_access,
                               read_dirs=read_dirs)
        result = await _run_with_cancel(adapter, episode, spawner, sandbox_config, recorder, run_id,
                                        tracking, cancel, kill, bridge,
                                        disk_watch_s=asker.settings.number("BOT_DISK_WATCH_INTERVAL"))
        channel.explain_stop(result)
        honesty.require_tools(result, bridge.tools_listed, strict=episode.mode == "strict", bridged=True)
    thread.record(recorder, run_id)
    version = await _finish_run(recorder, run_id, adapter, result, resumed, cancelled=cancel.is_set())
    return Turn(result, run_id, resumed, None if resumed else fresh_reason, version, agent=agent,
                unavailable=observed(recorder.events(run_id)))


async def _finish_run(recorder: Recorder, run_id: str, adapter: base.Adapter, result: base.Result, resumed: bool,
                      *, cancelled: bool) -> str | None:
    """Record how the run ended (its egress, CLI version, session and status); the CLI's version."""
    version = await cli_version.adapter_version(adapter)
    await recorder.flushed(run_id)  # finish_run waits for the run's events: not on the event loop
    recorder.attach_egress(run_id, getattr(result, "egress", None) or [])
    recorder.update_run(run_id, agent_version=version, session_id=result.session_id, resumed=int(resumed))
    recorder.finish_run(run_id, "cancelled" if cancelled else ("ok" if result.ok else "failed"),
                        {"error": result.error, "exit_code": result.exit_code})
    return version


async def _run_with_cancel(adapter: base.Adapter, episode: base.Episode, spawner: Spawner,
                           sandbox_config: SandboxConfig, recorder: Recorder, run_id: str,
                           tracking: Progress, cancel: asyncio.Event, kill: asyncio.Event,
                           bridge: BridgeServer, *, disk_watch_s: float) -> base.Result:

    async def forward_cancel() -> None:
        await cancel.wait()
        kill.set()

    async def on_event(event: base.Event) -> None:
        await recorder.attest_async(run_id, event)
        await tracking.on_event(event)

    watcher = asyncio.create_task(forward_cancel())
    try:
        return await runner.run_episode(adapter, episode, spawner, sandbox_config,
                                        on_event=on_event, cancel=kill, bridge_connected=bridge.connected,
                                        disk_watch_s=disk_watch_s, pace=LinePace(), mark=bridge.stdout)
    finally:
        watcher.cancel()


def _sandbox_config(asker: Asker, worktree: Worktree, agent: str, adapter: base.Adapter, spawner: Spawner,
                    attachments: Path | None = None) -> SandboxConfig:

    cfg, settings = worktree.config, asker.settings
    home = session_home.home_dir(settings.data_dir, asker.conversation, agent)
    limits = sandbox_limits(cfg.limits, settings)
    gateway = _host_port(settings.agent_base_url(agent))
    return SandboxConfig(workdir=worktree.path, home=home, writable=cfg.mode == "native",
                         allowed_hosts=tuple(adapter.default_allowed_hosts) + tuple(cfg.egress_hosts),
                         gateways=(gateway,) if gateway else (), limits=limits, min_tier=spawner.tier,
                         ro_binds=(settings.agents_dir,) + ((attachments,) if attachments else ()),
                         tmpdir=home / ".tmp")


# The operator's caps: BOT_LIMIT_<NAME> (a whole number, or a size such as 512MiB).
OPERATOR_LIMITS = {"connections": "CONNECTIONS", "worktree_growth_bytes": "WORKTREE",
                   "home_bytes": "HOME", "tmpfs_bytes": "TMP"}
REPO_LIMITS = {"connections": "connections", "worktree_growth_bytes": "worktree_bytes",
               "home_bytes": "home_bytes", "tmpfs_bytes": "tmp_bytes"}


def sandbox_limits(repo: RepoLimits, settings: Settings) -> Limits:
    """The episode's limits: the repository's memory, time and processes; for connections and
    disk the operator's caps (the settings' BOT_LIMIT_*, else the defaults), which the repository
    may only lower."""

    limits = Limits(memory_bytes=repo.memory_bytes, timeout_s=repo.timeout_s, pids=repo.pids,
                    **_operator_caps(settings))
    for field, repo_field in REPO_LIMITS.items():
        asked = getattr(repo, repo_field)
        if asked is not None:
            setattr(limits, field, min(asked, getattr(limits, field)))
    return limits


def _operator_caps(settings: Settings) -> dict[str, int]:

    caps = {}
    for field, name in OPERATOR_LIMITS.items():
        text = settings.text(f"BOT_LIMIT_{name}")
        if text is None:
            continue
        try:
            caps[field] = int(text) if field == "connections" else size_bytes(text)
            if caps[field] < 1:
                raise ValueError("must be at least 1")
        except ValueError as exc:
            raise MissingConfig(f"BOT_LIMIT_{name}={text!r} is not valid: {exc}") from None
    return caps


def _host_port(url: str | None) -> str | None:
    if not url:
        return None
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
