"""Sandbox start-to-exit overhead: bare spawn vs tier 1 vs Anthropic's `srt`, same commands.

Tier 1 is measured in-process (as the bot runs it: cgroups, seccomp, netns, listener
injection, proxy, wall clock). `srt` is its own node CLI, so its figure includes node's
start-up; its policy is comparable: one allowed domain, writes only to the workdir,
/root unreadable.
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench import aims
from bench.size import smoke
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner, bwrap_argv, find_bwrap, inside_env
from tests.entry_settings import current

ROOT = Path(__file__).resolve().parent.parent
AGENTS = ROOT / "agents-cli" / "node_modules"
SRT = AGENTS / ".bin" / "srt"
RG = AGENTS / "@openai" / "codex-linux-x64" / "vendor" / "x86_64-unknown-linux-musl" / "codex-path" / "rg"
COMMANDS = {"/bin/true": ["/bin/true"], "node -e 0": ["node", "-e", "0"]}


def _summary(samples_s: list[float]) -> tuple[float, float, float]:
    ms = sorted(s * 1000 for s in samples_s)
    return statistics.mean(ms), statistics.median(ms), ms[int(len(ms) * 0.9) - 1]


async def _bare(argv: list[str], env: dict[str, str]) -> None:
    proc = await asyncio.create_subprocess_exec(*argv, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL, env=env)
    await proc.wait()


async def _tier1(spawner: Tier1Spawner, config: SandboxConfig, argv: list[str]) -> None:
    proc = await spawner.start(config, argv, {})
    await asyncio.gather(proc.stdout.read(), proc.stderr.read())
    if await proc.wait() != 0:
        raise RuntimeError(f"{argv} failed in tier 1: {proc.outcome()}")


def _bwrap_only(config: SandboxConfig, argv: list[str]) -> list[str]:
    """Tier 1's bwrap command line without seccomp, listener injection, cgroups or proxy."""
    full = bwrap_argv(find_bwrap(), config, argv, None, (0, 0, 0))
    at = full.index("--seccomp")
    return full[:at] + full[at + 6:]


async def _measure(factories: list, runs: int) -> list[list[float]]:
    """Samples of each factory, taken in turn round by round: on this shared 2-core machine the load
    moves by the second, and a ratio of two figures taken minutes apart measures the load."""
    for factory in factories:
        await factory()  # warm-up
    samples: list[list[float]] = [[] for _ in factories]
    for _ in range(runs):
        for factory, taken in zip(factories, samples, strict=True):
            started = time.perf_counter()
            await factory()
            taken.append(time.perf_counter() - started)
    return samples


def _srt_samples(argv: list[str], workdir: Path, runs: int) -> list[float] | str:
    if not SRT.exists():
        return "srt not installed (make agents)"
    settings = workdir / "srt-settings.json"
    settings.write_text(json.dumps({
        "network": {"allowedDomains": ["api.anthropic.com"], "deniedDomains": []},
        "filesystem": {"denyRead": ["/root"], "allowWrite": [str(workdir)], "denyWrite": []}}))
    bin_dir = workdir / "bin"  # srt needs ripgrep on PATH; codex ships one
    bin_dir.mkdir(exist_ok=True)
    if RG.exists() and not (bin_dir / "rg").exists():
        (bin_dir / "rg").symlink_to(RG)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    samples = []
    for i in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run([str(SRT), "-s", str(settings), *argv], cwd=workdir, env=env,
                              capture_output=True, timeout=60)
        if done.returncode != 0:
            return f"srt failed: {done.stderr.decode(errors='replace').strip()[:200]}"
        if i:
            samples.append(time.perf_counter() - started)
    return samples


async def _run_async(runs: int, srt_runs: int) -> list[str]:
    lines = []
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as scratch:
        work = Path(scratch)
        config = SandboxConfig(workdir=work, home=work / "home", limits=Limits(timeout_s=60))
        spawner = Tier1Spawner(host=current().sandbox_host)
        for label, argv in COMMANDS.items():
            env = inside_env(config, {})  # same scrubbed env both ways (host NODE_* vars slow node)
            bare, tier1, plain_bwrap = map(_summary, await _measure([
                lambda argv=argv, env=env: _bare(argv, env),
                lambda argv=argv: _tier1(spawner, config, argv),
                lambda argv=argv, env=env: _bare(_bwrap_only(config, argv), env)], runs))
            srt = await asyncio.to_thread(_srt_samples, argv, work, srt_runs)
            if label == "/bin/true":
                aims.record("tier-1 start ÷ the same bwrap mounts alone", tier1[1] / plain_bwrap[1], at_most=2.0,
                            floor=f"bwrap alone {plain_bwrap[1]:.1f} ms, /bin/true")
            lines.append(f"{label}: bare {bare[0]:.1f} ms (median {bare[1]:.1f}) · tier 1 "
                         f"{tier1[0]:.1f} ms (median {tier1[1]:.1f}, p90 {tier1[2]:.1f}) · "
                         f"added {tier1[1] - bare[1]:.1f} ms (median); same bwrap mounts alone "
                         f"{plain_bwrap[1]:.1f} ms (median)")
            if isinstance(srt, str):
                lines.append(f"{label}: srt: {srt}")
            else:
                s = _summary(srt)
                lines.append(f"{label}: srt {s[0]:.1f} ms (median {s[1]:.1f}, p90 {s[2]:.1f}, "
                             f"{len(srt)} runs; includes its node start-up)")
    return lines


def run(runs: int = 40, srt_runs: int = 8) -> list[str]:
    if smoke():
        runs, srt_runs = 3, 1
    return asyncio.run(_run_async(runs, srt_runs))


if __name__ == "__main__":
    for line in run():
        print(line)
