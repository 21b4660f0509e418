"""The image: its size, its build time with podman's cache warm, and tier 1's start-to-exit time
for /bin/true inside a container against the same on the host (`python -m bench container`).

Both start-up figures are measured in-process, as the bot runs a sandbox (cgroups, seccomp, netns,
listener injection, proxy): the same snippet runs under the host's Python and, through `podman
exec`, under the image's, so podman's own exec time is not in the container's figure. Skips, saying
why, without rootful podman, runc and mmdebstrap on a cgroup-v1 host.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from tests.deploy import container

ROOT = Path(__file__).resolve().parent.parent
TAG = "localhost/github-agent-bot:bench"
RUNS = 20
TIMED = """
import asyncio, json, sys, tempfile, time
from pathlib import Path
from sandbox.base import Limits, SandboxConfig
from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

async def once():
    with tempfile.TemporaryDirectory() as scratch:
        cfg = SandboxConfig(workdir=Path(scratch), home=Path(scratch) / "home", limits=Limits(timeout_s=20))
        started = time.perf_counter()
        proc = await Tier1Spawner(host=current().sandbox_host).start(cfg, ["/bin/true"], {})
        await asyncio.gather(proc.stdout.read(), proc.stderr.read())
        assert await proc.wait() == 0
        return time.perf_counter() - started

async def main(runs):
    return [await once() for _ in range(runs)]

print(json.dumps(asyncio.run(main(int(sys.argv[1])))))
"""


def run() -> list[str]:
    missing = container.missing_tools()
    if missing or os.geteuid() != 0 or not container.cgroup_v1():
        return [f"skipped: needs rootful podman, runc and mmdebstrap on a cgroup-v1 host (missing: {missing})"]
    started = time.perf_counter()
    container.build(TAG, Path("/tmp/bench-container-build.log"))
    build_s = time.perf_counter() - started
    size = int(container.podman("image", "inspect", "--format", "{{.Size}}", TAG).stdout.strip())
    host = _host_samples()
    inside = _container_samples()
    return [f"image {TAG}: {size / 1e9:.2f} GB; build with the cache warm: {build_s:.0f} s",
            _line("tier 1 /bin/true on the host", host), _line("tier 1 /bin/true in the container", inside),
            f"container overhead (median): {(statistics.median(inside) - statistics.median(host)) * 1000:+.0f} ms"]


def _line(what: str, samples: list[float]) -> str:
    ms = sorted(s * 1000 for s in samples)
    return f"{what}: median {statistics.median(ms):.0f} ms, p90 {ms[int(len(ms) * 0.9) - 1]:.0f} ms ({len(ms)} runs)"


def _host_samples() -> list[float]:
    done = subprocess.run([sys.executable, "-c", TIMED, str(RUNS)], cwd=ROOT, capture_output=True, text=True,
                          check=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return [float(s) for s in json.loads(done.stdout)]


def _container_samples() -> list[float]:
    name = f"bot-bench-{os.getpid()}"
    with container.delegated_cgroup() as cgroup:
        container.podman("run", "--detach", "--rm", "--name", name, "--no-healthcheck", *container.TIER1_OPTIONS,
                         *cgroup, "--env", f"BOT_CGROUP_ROOT={container.CGROUP_IN_CONTAINER}",
                         "--entrypoint", "sleep", TAG, "infinity")
        try:
            done = container.podman("exec", name, "python3", "-c", TIMED, str(RUNS), timeout=600)
        finally:
            container.podman("rm", "--force", "--time", "0", name, check=False)
    return [float(s) for s in json.loads(done.stdout)]
