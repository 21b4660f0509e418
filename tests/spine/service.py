"""A running `bot serve` subprocess wired to the fake GitHub, a file:// git remote and the fake
model provider, for the end-to-end and crash tests."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.fakes.github import FakeGitHub
from tests.spine.helpers import SECRET, app_key, signed

ROOT = Path(__file__).resolve().parents[2]
REPO = "Codertocat/Hello-World"  # the repository of the recorded payloads
PUBLIC_URL = "https://bot.example.com"
SHARED_KEY = "a2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2s="  # base64 of 32 bytes, the deployment's BOT_SECRET_KEY


@dataclass(frozen=True)
class Profile:
    """The configuration a service end-to-end test runs under. `developer`: a developer's defaults
    (no public URL, no sign-in, SQLite, one process). `deployment`: what every real deployment has
    (README, compose.yaml, deploy/kubernetes): BOT_PUBLIC_URL with requests carrying its Host, OAuth
    sign-in, a metrics token, PostgreSQL with a shared key, JSON logs, tier 1, and the intake
    (`BOT_WORKERS=0 bot serve`) and `bot worker` as separate processes."""

    name: str
    database_url: str | None = None

    @property
    def deployed(self) -> bool:
        return self.name == "deployment"

    def env(self) -> dict[str, str]:
        if not self.deployed:
            return {}
        assert self.database_url, "the deployment profile runs on PostgreSQL"
        return {"BOT_PUBLIC_URL": PUBLIC_URL, "GITHUB_CLIENT_ID": "Iv1.0123456789abcdef",
                "GITHUB_CLIENT_SECRET": "0123456789abcdef0123456789abcdef01234567",
                "BOT_METRICS_TOKEN": "metrics-token-0123456789abcdef", "BOT_LOG_FORMAT": "json",
                "BOT_SANDBOX_TIER": "1", "BOT_DATABASE_URL": self.database_url, "BOT_SECRET_KEY": SHARED_KEY}


DEVELOPER = Profile("developer")
# a service end-to-end scenario: it runs under both profiles (tests/conftest.py's `profile`)
scenario = pytest.mark.usefixtures("profile")
_profile = DEVELOPER


def use_profile(profile: Profile) -> None:
    """The profile every service_env and Service made from now on follows (tests/conftest.py's
    `profile` fixture sets it for each scenario and puts the developer's back after)."""
    global _profile
    _profile = profile


def current_profile() -> Profile:
    return _profile


def make_remote(base: Path, full_name: str = REPO) -> Path:
    """A bare repository at base/<owner>/<repo>.git with one commit on main."""
    work = base / "seed"
    work.mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "README.md").write_text("# Hello-World\n\nA greeting program.\n")
    subprocess.run(git + ["-C", str(work), "add", "."], check=True)
    subprocess.run(git + ["-C", str(work), "commit", "-qm", "initial"], check=True)
    bare = base / "remotes" / f"{full_name}.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    # pull request #2 of the recorded payloads: head branch `changes`, one commit ahead
    (work / "CHANGES.md").write_text("- a change under review\n")
    subprocess.run(git + ["-C", str(work), "add", "."], check=True)
    subprocess.run(git + ["-C", str(work), "commit", "-qm", "a change"], check=True)
    subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), "HEAD:refs/heads/changes",
                    "HEAD:refs/pull/2/head"], check=True)
    return base / "remotes"


def seeded_github() -> FakeGitHub:
    gh = FakeGitHub(app_id="4242", public_key=app_key()[1]).start()
    gh.add_repo(REPO)
    gh.add_issue(REPO, 1, title="Spelling error in the README file", user="Codertocat")
    gh.set_permission(REPO, "Codertocat", "admin")
    gh.add_pull(REPO, 2, head_ref="changes", title="Update the README with new information.",
                user="Codertocat")
    return gh


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Service:
    """`bot serve` in its own process group; `kill()` is a kill -9. Under the deployment profile the
    intake serves with BOT_WORKERS=0 and a `bot worker` process runs the jobs (logging to the same
    file); stop and kill reach both."""

    stop_seconds = 30  # how long `stop()` waits after SIGTERM before the kill -9

    def __init__(self, env: dict[str, str], log_path: Path):
        self.env, self.log_path = env, log_path
        self.port = int(env["BOT_PORT"])
        self.proc: subprocess.Popen | None = None
        self.worker: subprocess.Popen | None = None
        self.separate_worker = current_profile().deployed and env.get("BOT_WORKERS") != "0"

    def database(self):  # type: ignore[no-untyped-def]
        """The service's database, opened as its entry points open it (SQLite in the data dir, or
        the deployment's PostgreSQL)."""
        from bot.config import Settings
        from bot.db import connect

        return connect(settings=Settings(dict(self.env)))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def headers(self) -> dict[str, str]:
        """The Host a request names: BOT_PUBLIC_URL's when set (the service refuses any other)."""
        public = self.env.get("BOT_PUBLIC_URL")
        return {"Host": urlsplit(public).netloc} if public else {}

    def start(self) -> Service:
        log = open(self.log_path, "ab")
        env = dict(self.env, BOT_WORKERS="0") if self.separate_worker else self.env
        self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=ROOT, env=env,
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if self.separate_worker:
            self.worker = subprocess.Popen([sys.executable, "-m", "bot.cli", "worker"], cwd=ROOT, env=self.env,
                                           stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 60  # a loaded two-core machine imports slowly
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                time.sleep(0.1)
        self.kill()  # never left running behind a failed start
        raise AssertionError("bot serve did not start:\n" + self.log_path.read_text()[-3000:])

    def deliver(self, data: dict, event: str = "issue_comment", delivery: str | None = None) -> httpx.Response:
        body, headers = signed(data, event, delivery)
        return httpx.post(f"{self.url}/webhook", content=body, headers={**headers, **self.headers}, timeout=10)

    def processes(self) -> list[subprocess.Popen]:
        return [proc for proc in (self.proc, self.worker) if proc is not None]

    def kill(self) -> None:
        for proc in self.processes():
            with contextlib.suppress(ProcessLookupError):  # its group may be gone already
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()

    def stop(self) -> None:
        """SIGTERM to the server process (and the worker), as a supervisor sends it; kill -9 if it hangs."""
        running = [proc for proc in self.processes() if proc.poll() is None]
        for proc in running:
            os.kill(proc.pid, signal.SIGTERM)
        for proc in running:
            try:
                proc.wait(self.stop_seconds)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if self.env.get("BOT_LOG_FORMAT") == "json":
            assert not (lines := self.not_json_lines()), f"log lines that are not JSON: {lines[:5]}"

    def not_json_lines(self) -> list[str]:
        """The lines of the log that are not JSON objects (a deployment's log shipper drops them)."""
        import json

        found = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            try:
                parsed = json.loads(line) if line.strip() else {}
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict):
                found.append(line)
        return found


@contextmanager
def serving(gh: FakeGitHub, env: dict[str, str], log_path: Path) -> Iterator[Service]:
    """`bot serve` started for the length of the block; then it and the fake GitHub are stopped."""
    service = Service(env, log_path).start()
    try:
        yield service
    finally:
        service.stop()
        gh.stop()


def service_env(tmp: Path, gh: FakeGitHub, remotes: Path, provider_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OPENAI", "ANTHROPIC"))}
    env.update(BOT_DATA_DIR=str(tmp / "data"), BOT_PORT=str(free_port()), GITHUB_API_URL=gh.url,
               GITHUB_APP_ID="4242", GITHUB_PRIVATE_KEY=app_key()[0], GITHUB_WEBHOOK_SECRET=SECRET,
               BOT_GIT_BASE_URL=f"file://{remotes}", BOT_CODEX_BASE_URL=provider_url,
               OPENAI_API_KEY="sk-test-operator-key-0123456789", BOT_DEFAULT_AGENT="codex",
               BOT_PROGRESS_INTERVAL="0.5", PYTHONPATH=str(ROOT))
    env.update(current_profile().env())
    env.update(extra)
    return env
