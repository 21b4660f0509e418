"""A real `bot serve` for the first-run tests: no GitHub App unless the test sets one, the fake
GitHub's App endpoints as its API, and its log in a file the test reads (the setup code is there)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.spine.service import ROOT, free_port

CODE_LINE = re.compile(r"open (\S+)/\?code=([A-Za-z0-9_-]+) to create the GitHub App")


def first_run_env(tmp: Path, api_url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BOT_"))}
    env.update(BOT_DATA_DIR=str(tmp / "data"), BOT_PORT=str(free_port()), GITHUB_API_URL=api_url,
               BOT_GITHUB_OAUTH_URL="https://github.example", BOT_WORKERS="0", BOT_GC_INTERVAL="0",
               PYTHONPATH=str(ROOT))
    env.update(extra)
    return env


class Served:
    """`bot serve` started with `env`; `outcome()` waits until it serves or exits, whichever comes."""

    def __init__(self, env: dict[str, str], log_path: Path):
        self.env, self.log_path = env, log_path
        self.url = f"http://127.0.0.1:{env['BOT_PORT']}"
        with open(log_path, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=ROOT, env=env,
                                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def outcome(self) -> str:
        """'serving' once /healthz answers, else 'exited <code>' once the process ended."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return f"exited {self.proc.returncode}"
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return "serving"
            except httpx.HTTPError:
                time.sleep(0.1)
        raise AssertionError("bot serve neither served nor exited:\n" + self.log())

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def setup_code(self) -> tuple[str, str]:
        """(the address, the code) of the log's first-run line."""
        found = CODE_LINE.search(self.log())
        assert found, self.log()
        return found.group(1), found.group(2)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
