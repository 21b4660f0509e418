"""Adapters bench: parse throughput over the recorded transcripts against plain json.loads, and
the wall time of one real-CLI turn through bot/runner.py against the same CLI invoked bare with
the same argv, env, stdin and HOME files (both under the tier-0 jail's conditions, against the
fake provider, so the ratio is the runner's own overhead; the sandbox has its own bench).
"""
from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from adapters import base
from adapters.base import Credentials, Episode
from bench.size import pick, smoke
from bot.episode.runner import run_episode, write_home_files
from sandbox.base import SandboxConfig, base_env
from sandbox.tier0 import Tier0Spawner
from tests.entry_settings import current

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "cli"
AGENTS = tuple(base.names())
NOT_STREAMS = ("gemini-json.jsonl",)  # `-o json` pretty-printed, not the stream the adapter reads
TURNS = pick(5, 1)
PARSE_TARGET_S = 0.3


def run() -> list[str]:
    lines = [parse_line(agent) for agent in AGENTS]
    lines += [turn_line(agent) for agent in (("codex",) if smoke() else AGENTS)]  # smoke: one real CLI
    return lines


# parse throughput --------------------------------------------------------------------------

def parse_line(agent: str) -> str:
    sample = [line for path in sorted(TRANSCRIPTS.glob(f"{agent}-*.jsonl")) if path.name not in NOT_STREAMS
              for line in path.read_bytes().splitlines()]
    adapter = base.get(agent, current().operator_for(agent))
    repeat = 1
    while _time_loop(adapter.parse, sample * repeat) < PARSE_TARGET_S / 4:
        repeat *= 2
    batch = sample * repeat
    parse_s = min(_time_loop(adapter.parse, batch) for _ in range(3))
    loads_s = min(_time_loop(json.loads, batch) for _ in range(3))
    return (f"parse {agent:<8} {len(batch) / parse_s:>10,.0f} lines/s   json.loads {len(batch) / loads_s:>10,.0f}"
            f" lines/s   ratio {parse_s / loads_s:.2f}x  ({len(sample)} recorded lines)")


def _time_loop(fn, batch) -> float:
    started = time.perf_counter()
    for line in batch:
        fn(line)
    return time.perf_counter() - started


# one real turn -----------------------------------------------------------------------------

def turn_line(agent: str) -> str:
    from tests.fakes.provider import FakeProvider

    runner_s, bare_s = [], []
    with FakeProvider() as fake:
        for _ in range(TURNS):  # alternate, so drift on a busy host hits both sides alike
            runner_s.append(_runner_turn(agent, fake.url))
            bare_s.append(_bare_turn(agent, fake.url))
    runner, bare = statistics.median(runner_s), statistics.median(bare_s)
    return (f"turn  {agent:<8} runner {runner:.2f} s   bare {bare:.2f} s   ratio {runner / bare:.2f}"
            f"  (median of {TURNS}, fake provider, fresh HOME each)")


def _scratch_root() -> Path:
    """Outside /tmp (Codex refuses helper binaries under a temp dir) and outside any git
    checkout (OpenCode snapshots the enclosing repository, as it would a real worktree)."""
    path = Path("/var/tmp/bot-bench-adapters")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _episode(agent: str, url: str, root: Path) -> tuple[Episode, SandboxConfig]:
    work, home = root / "work", root / "home"
    work.mkdir(parents=True)
    adapter = base.get(agent, current().operator_for(agent))
    episode = Episode(prompt="Say hello", workdir=str(work), home=home, base_url=url,  # the CLI's default model
                      credentials=Credentials(env={adapter.credential_env[0]: "bench-dummy-key"}))
    return episode, SandboxConfig(workdir=work, home=home, min_tier=0, tmpdir=root / "tmp")


def _runner_turn(agent: str, url: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-runner-", dir=_scratch_root()) as scratch:
        episode, config = _episode(agent, url, Path(scratch))
        started = time.perf_counter()
        result = asyncio.run(run_episode(base.get(agent, current().operator_for(agent)), episode, Tier0Spawner(), config))
        elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(f"{agent} turn failed through the runner: {result.error}")
    return elapsed


def _bare_turn(agent: str, url: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-bare-", dir=_scratch_root()) as scratch:
        episode, config = _episode(agent, url, Path(scratch))
        invocation = base.get(agent, current().operator_for(agent)).command(episode)
        config.tmpdir.mkdir(parents=True)
        env = base_env(config.home, config.tmpdir) | invocation.env
        started = time.perf_counter()
        write_home_files(config.home, invocation)  # the runner's time includes this too
        done = subprocess.run(invocation.argv, input=invocation.stdin, env=env, cwd=config.workdir,
                              capture_output=True, start_new_session=True)
        elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{agent} bare turn failed: {done.stderr[-500:]!r}")
    return elapsed
