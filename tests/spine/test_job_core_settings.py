"""The job's core receives the entry point's settings (or the values it needs) and never reads the
environment: each test points the environment one way and the settings it hands another."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from adapters import base
from adapters.base import Operator
from bot.config import Settings
from bot.config.table import variable
from bot.episode import session_home
from bot.episode import turn as episode
from bot.episode.runner import run_episode
from bot.episode.stop import Stop
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import thread_text, turns
from bot.job.context import Job
from bot.job.modes import GitHubMode
from bot.job.run import JobRun
from bot.service import retention, store
from bot.workspace import repo_config
from bot.workspace.repo_config import RepoLimits
from bot.workspace.worktrees import conversation_slug
from sandbox import disk
from sandbox.base import Host, SandboxConfig
from sandbox.tier0 import Tier0Spawner
from tests.adapters.test_runner import ScriptAdapter, _printer, _setup
from tests.entry_settings import current
from tests.fakes.thread import quiet_thread


def _elsewhere(tmp_path):
    """A data dir the test hands down, other than the one the environment names (tmp_path/data)."""
    return tmp_path / "handed"


def test_the_attachments_folder_is_made_in_the_data_dir_it_is_handed(tmp_path):
    folder = thread_text.attachments_dir(_elsewhere(tmp_path), "octo/repo#2")
    assert folder == _elsewhere(tmp_path) / "attachments" / conversation_slug("octo/repo#2")
    assert folder.is_dir() and not (tmp_path / "data" / "attachments").exists()


def test_a_cli_home_is_made_in_the_data_dir_it_is_handed(tmp_path):
    home = session_home.home_dir(_elsewhere(tmp_path), "octo/repo#2", "codex")
    assert home == _elsewhere(tmp_path) / "homes" / conversation_slug("octo/repo#2") / "codex"
    assert home.is_dir() and not (tmp_path / "data" / "homes").exists()


def _watch_recording(monkeypatch) -> list[float]:
    """The intervals the disk watch is started with; the watch itself waits to be cancelled."""
    asked: list[float] = []

    async def watch(quotas: list[disk.Quota], interval_s: float) -> disk.Breach:
        asked.append(interval_s)
        await asyncio.Event().wait()
        raise AssertionError("the watch is cancelled when the episode ends")

    monkeypatch.setattr(disk, "watch", watch)
    return asked


async def test_the_disk_watch_looks_at_the_interval_the_episode_is_handed(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DISK_WATCH_INTERVAL", "7")
    asked = _watch_recording(monkeypatch)
    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(_printer("done")), episode, Tier0Spawner(), config, disk_watch_s=0.25)
    assert asked == [0.25]


async def test_an_episode_handed_no_disk_watch_interval_looks_at_the_table_default(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DISK_WATCH_INTERVAL", "7")
    asked = _watch_recording(monkeypatch)
    episode, config = _setup(tmp_path)
    await run_episode(ScriptAdapter(_printer("done")), episode, Tier0Spawner(), config)
    assert asked == [float(str(variable("BOT_DISK_WATCH_INTERVAL").default))]


def test_retention_drops_a_threads_home_in_the_data_dir_it_sweeps(tmp_path):
    home = session_home.home_dir(_elsewhere(tmp_path), "o/r#1", "codex")
    (home / "rollout.jsonl").write_text("the CLI's own transcript\n")
    retention.collect_home(store.connect(settings=current()), "o/r#1", _elsewhere(tmp_path))
    assert not home.exists()


# -- an episode: the operator's caps, the sandbox and the CLI come from the job's settings ---------

MiB = 1 << 20


def _handed(tmp_path, **texts: str) -> Settings:
    return Settings({"BOT_DATA_DIR": str(_elsewhere(tmp_path)), **texts})


def test_the_operators_caps_come_from_the_settings_the_episode_is_handed(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_LIMIT_HOME", "256MiB")
    limits = episode.sandbox_limits(RepoLimits(), _handed(tmp_path, BOT_LIMIT_HOME="128MiB"))
    assert limits.home_bytes == 128 * MiB


def _ctx(settings: Settings) -> Job:
    return Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="hi")),
               conversation="o/r#1", surface=None,
               mode=GitHubMode(quiet_thread()), settings=settings)


def _sandbox_config_of(tmp_path, settings: Settings) -> SandboxConfig:
    worktree = SimpleNamespace(path=tmp_path / "work", config=repo_config.parse(""))
    return episode._sandbox_config(_ctx(settings), worktree, "codex", base.get("codex"), Tier0Spawner())


def test_the_sandbox_binds_the_clis_folder_of_the_jobs_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_AGENTS_DIR", str(tmp_path / "from-the-environment"))
    config = _sandbox_config_of(tmp_path, _handed(tmp_path, BOT_AGENTS_DIR=str(tmp_path / "handed-agents")))
    assert config.ro_binds == (tmp_path / "handed-agents",)


def test_the_sandbox_lets_the_agent_reach_the_gateway_of_the_jobs_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_CODEX_BASE_URL", "https://environment.example:8443/v1")
    config = _sandbox_config_of(tmp_path, _handed(tmp_path, BOT_CODEX_BASE_URL="https://handed.example/v1"))
    assert config.gateways == ("handed.example:443",)


def test_an_episode_runs_the_cli_the_jobs_settings_name(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_CODEX_BIN", "/from/the/environment/codex")
    binaries, real_get = [], base.get

    def get(agent: str, operator: Operator | None = None) -> base.Adapter:
        if operator is not None:  # the settings' own look at the adapter passes none
            binaries.append(operator.binary)
        return real_get(agent, operator)

    monkeypatch.setattr(episode.base, "get", get)
    monkeypatch.setattr(episode.credentials, "resolve_origin", lambda *args, **kwargs: None)
    monkeypatch.setattr(episode.credentials, "auth_required_message", lambda *args, **kwargs: "no credentials")
    with pytest.raises(Stop):
        await_turn(_ctx(_handed(tmp_path, BOT_CODEX_BIN="/handed/codex")))
    assert binaries == ["/handed/codex"]


class _SandboxChosen(Exception):
    """Raised where the episode picks its sandbox: what comes after is not under test."""


def test_an_episode_picks_its_sandbox_tier_and_host_from_the_jobs_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SANDBOX_TIER", "1")
    chosen = []

    def select_spawner(tier: int, host: Host) -> None:
        chosen.append((tier, host.cgroup_root))
        raise _SandboxChosen

    origin = SimpleNamespace(credentials=SimpleNamespace(secret_values=lambda: []))
    monkeypatch.setattr(episode.credentials, "resolve_origin", lambda *args, **kwargs: origin)
    monkeypatch.setattr(episode.sandbox, "select_spawner", select_spawner)
    with pytest.raises(_SandboxChosen):
        await_turn(_ctx(_handed(tmp_path, BOT_SANDBOX_TIER="0", BOT_CGROUP_ROOT=str(tmp_path))))
    assert chosen == [(0, tmp_path)]


def await_turn(ctx: Job) -> None:
    asyncio.run(turns.run_turn(JobRun.begin(store.connect(settings=current()), ctx), ctx, SimpleNamespace(), "codex", SimpleNamespace(),
                                 asyncio.Event(), resume_id=None, fresh_reason=None))
