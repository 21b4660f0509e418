"""The bot's image, built here by scripts/build-image, and its containers run by rootful podman with
runc on the host's network: what tier 1 needs as compose.yaml's `x-sandbox` asks for it
(deploy/container/seccomp.json, an unmasked /proc, no capability, the container capped at one
episode's memory and processes), or with a cgroup subtree delegated to the image's user for
several episodes at once; secrets passed by name, never in argv."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.deploy import compose_file

ROOT = Path(__file__).resolve().parents[2]
BOT_UID = 10001  # the image's user (Containerfile)
CGROUP_IN_CONTAINER = "/run/bot-cgroup"
# compose.yaml's x-sandbox keys as `podman run` options; a key not named here fails the tests, so
# that the container test never runs with less (or other) than the compose file asks
COMPOSE_FLAGS = {"security_opt": "--security-opt", "cap_drop": "--cap-drop", "mem_limit": "--memory",
                 "memswap_limit": "--memory-swap", "pids_limit": "--pids-limit"}
NOT_RUN_OPTIONS = {"stop_grace_period"}  # the tests stop containers with their own grace


def compose_sandbox_options() -> list[str]:
    """compose.yaml's x-sandbox as `podman run` options, the seccomp profile's path made absolute."""
    options: list[str] = []
    for key, value in compose_file.load()["x-sandbox"].items():
        if key in NOT_RUN_OPTIONS:
            continue
        assert key in COMPOSE_FLAGS, f"compose.yaml's x-sandbox has {key}, which the container test does not pass"
        for one in value if isinstance(value, list) else [value]:
            text = str(one)
            if text.startswith("seccomp=./"):
                text = f"seccomp={ROOT / text.removeprefix('seccomp=./')}"
            options += [COMPOSE_FLAGS[key], text]
    return options


def compose_worker_environment() -> dict[str, str]:
    """What compose.yaml sets for its first worker beyond the shared environment (BOT_WORKERS)."""
    worker = compose_file.load()["services"]["worker-1"]
    return {"BOT_WORKERS": str(worker["environment"]["BOT_WORKERS"])}


TIER1_OPTIONS = compose_sandbox_options()


def missing_tools() -> list[str]:
    return [tool for tool in ("podman", "runc", "mmdebstrap") if shutil.which(tool) is None]


def podman_env() -> dict[str, str]:
    """This process's environment with the podman configuration scripts/build-image writes."""
    conf = subprocess.run([str(ROOT / "scripts" / "build-image"), "--containers-conf"], check=True,
                          capture_output=True, text=True).stdout.strip()
    return dict(os.environ, CONTAINERS_CONF=conf)


def build(tag: str, log: Path) -> None:
    with open(log, "ab") as out:
        done = subprocess.run([str(ROOT / "scripts" / "build-image"), "--tag", tag], cwd=ROOT,
                              stdout=out, stderr=subprocess.STDOUT, timeout=3600)
    assert done.returncode == 0, "scripts/build-image failed:\n" + log.read_text()[-4000:]


def podman(*argv: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(["podman", *argv], env=podman_env(), capture_output=True, text=True,
                          check=check, timeout=timeout)


def owned_by_bot(path: Path) -> Path:
    """`path` (made if missing) and everything under it owned by the image's user."""
    path.mkdir(parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
            os.lchown(name, BOT_UID, BOT_UID)
    return path


@contextmanager
def delegated_cgroup() -> Iterator[list[str]]:
    """A memory and a pids cgroup (v1) owned by the image's user, as the podman options that mount
    them where BOT_CGROUP_ROOT points; removed afterwards."""
    name = f"bot-container-{uuid.uuid4().hex[:8]}"
    made = [Path("/sys/fs/cgroup") / controller / name for controller in ("memory", "pids")]
    for group in made:
        group.mkdir()
        owned_by_bot(group)
    try:
        yield [option for group in made for option in
               ("--volume", f"{group}:{CGROUP_IN_CONTAINER}/{group.parent.name}:rw")]
    finally:
        for group in made:
            for leftover in sorted(group.rglob("*"), reverse=True):
                if leftover.is_dir():
                    leftover.rmdir()
            group.rmdir()


def cgroup_v1() -> bool:
    return all((Path("/sys/fs/cgroup") / c / "cgroup.procs").exists() for c in ("memory", "pids"))


class Container:
    """One `podman run` of the image on the host's network, its hostname its name; every variable
    of `env` reaches it by name only (`--env NAME`: podman reads the value from its own environment)."""

    def __init__(self, image: str, name: str, env: dict[str, str], log: Path):
        self.image, self.name, self.env, self.log = image, name, env, log
        self.proc: subprocess.Popen | None = None

    def start(self, command: str, options: list[str]) -> Container:
        argv = ["podman", "run", "--rm", "--name", self.name, "--hostname", self.name, "--network", "host",
                "--no-healthcheck", *options, *[a for n in sorted(self.env) for a in ("--env", n)],
                self.image, command]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(argv, env={**podman_env(), **self.env}, stdout=out,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait_until(self, ready: Callable[[], Any], what: str, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc and self.proc.poll() is None, f"{self.name} exited:\n{self.output()}"
            if ready():
                return
            time.sleep(0.2)
        raise AssertionError(f"{self.name}: {what} not within {timeout}s:\n{self.output()}")

    def wait_healthy(self, port: int) -> Container:
        def healthy() -> bool:
            try:
                return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False
        self.wait_until(healthy, "/healthz")
        return self

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:] if self.log.exists() else ""

    def stop(self, grace: int = 60) -> int:
        """`podman stop`: SIGTERM, then SIGKILL after `grace` seconds, as a rolling update does."""
        if self.proc and self.proc.poll() is None:
            podman("stop", "--time", str(grace), self.name, check=False, timeout=grace + 60)
            self.proc.wait(grace + 60)
        return self.proc.returncode if self.proc else 0

    def remove(self) -> None:
        podman("rm", "--force", "--ignore", self.name, check=False)
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
