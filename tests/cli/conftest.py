"""`bot run` as a person runs it: a real repository, the real sandbox and CLI, the fake provider;
the command driven through a pipe or a pseudo-terminal."""
from __future__ import annotations

import os
import pty
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.entry_settings import current
from tests.fakes.provider import FakeProvider

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-local-test-0123456789"


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), "-c", "user.name=t", "-c", "user.email=t@e", *args], check=True,
                   capture_output=True)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / "hello.py").write_text("print('hello')\n")
    (path / "pkg").mkdir()
    (path / "pkg" / "mod.py").write_text("X = 1\n")
    git(path, "add", ".")
    git(path, "commit", "-qm", "init")
    return path


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Bot:
    """`bot <args>` in a prepared environment: through pipes, or on a pseudo-terminal."""

    env: dict[str, str]
    repo: Path
    provider: FakeProvider
    tmp: Path

    def __call__(self, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> Done:
        done = subprocess.run([sys.executable, "-m", "bot.cli", *args], env=self.env | (env or {}),
                              capture_output=True, text=True, timeout=240, cwd=cwd or ROOT,
                              stdin=subprocess.DEVNULL)
        return Done(done.returncode, done.stdout, done.stderr)

    def run(self, request: str, *extra: str, **kw) -> Done:
        return self("run", request, "--agent", "codex", "--repo", str(self.repo), *extra, **kw)

    def on_terminal(self, *args: str, interrupt_at: str | None = None) -> tuple[int, str]:
        """Stdout and stderr both on one pseudo-terminal, as in a terminal window: what it showed.
        With `interrupt_at`, Ctrl-C (SIGINT) is sent once that text has been shown."""
        leader, follower = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", *args], env=self.env | {"COLUMNS": "100"},
                                stdin=follower, stdout=follower, stderr=follower, cwd=ROOT, close_fds=True,
                                preexec_fn=_as_a_shell_starts_it)
        os.close(follower)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the last holder of the terminal is gone
                break
            if not chunk:
                break
            shown += chunk
            if interrupt_at and interrupt_at.encode() in shown:
                proc.send_signal(signal.SIGINT)
                interrupt_at = None
        os.close(leader)
        return proc.wait(timeout=240), shown.decode("utf-8", "replace")


def _as_a_shell_starts_it() -> None:
    """A command typed at a terminal gets Ctrl-C's default action, even when this test run itself was
    started in the background, where the shell made SIGINT ignored for everything it starts."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def bot(tmp_path):
    repo = make_repo(tmp_path / "repo")
    with FakeProvider() as provider:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI", "ANTHROPIC", "GITHUB_", "BOT_"))}
        env.update(BOT_DATA_DIR=str(tmp_path / "data"), BOT_CODEX_BASE_URL=provider.url, OPENAI_API_KEY=KEY,
                   PYTHONPATH=str(ROOT), HOME=str(tmp_path / "home"), BOT_AGENTS_DIR=str(current().agents_dir))
        yield Bot(env, repo, provider, tmp_path)


def visible(shown: str) -> str:
    """What stays on the screen: each line as left after its last carriage-return-and-clear."""
    lines = shown.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rsplit("\r\x1b[2K", 1)[-1] for line in lines)
