"""`bot run` as a user runs it: a subprocess on a one-commit local repository, the fake model
provider behind Codex, no GitHub and no provider keys inherited from the host."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.fakes.provider import FakeProvider
from tests.spine.service import ROOT


@dataclass
class LocalCli:
    repo: Path
    data: Path
    provider: FakeProvider
    env: dict[str, str]

    def bot(self, *args: str) -> subprocess.CompletedProcess:
        """`bot <args>` with this data dir."""
        return subprocess.run([sys.executable, "-m", "bot.cli", *args], env=self.env, capture_output=True,
                              text=True, timeout=180, cwd=ROOT)

    def run(self, request: str, *extra: str) -> subprocess.CompletedProcess:
        """`bot run <request>` with Codex on the local repository."""
        return self.bot("run", request, "--agent", "codex", "--repo", str(self.repo), *extra)


@contextmanager
def local_cli(tmp_path: Path) -> Iterator[LocalCli]:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    (repo / "hello.py").write_text("print('hello')\n")
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "i"],
                   check=True)
    with FakeProvider() as provider:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GITHUB_"))}
        env.update(BOT_DATA_DIR=str(tmp_path / "data"), BOT_CODEX_BASE_URL=provider.url,
                   OPENAI_API_KEY="sk-local-test-0123456789", PYTHONPATH=str(ROOT))
        yield LocalCli(repo, tmp_path / "data", provider, env)
