"""A pull request with a known bug, served by the fake GitHub (its diff from real git), a file://
remote holding its head, and `bot serve` wired to one fake provider per agent (used by the
tests in this folder and by bench/review.py)."""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from tests.fakes.provider import FakeProvider
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, seeded_github, service_env

BASE_APP = ("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n"
            "def mul(a, b):\n    return a * b\n")
HEAD_APP = ('"""Arithmetic helpers."""\ndef add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n\n\n'
            "def mul(a, b):\n    return a * b\n")
PR = 2
BUG_LINE = 3  # `return a - b` in add(), new numbering


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


def make_review_remote(base: Path, bot_yml: str | None = None,
                       extra: dict[str, str] | None = None) -> tuple[Path, dict[str, str]]:
    """A bare repository whose main has app.py (and `bot_yml` as .github/bot.yml) and whose
    refs/pull/2/head brings the bug (and the `extra` files); returns (the remotes folder, each
    changed file's patch as GitHub's files API gives it)."""
    work = base / "seed"
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    (work / "app.py").write_text(BASE_APP)
    if bot_yml is not None:
        (work / ".github").mkdir()
        (work / ".github" / "bot.yml").write_text(bot_yml)
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "initial")
    bare = base / "remotes" / f"{REPO}.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    (work / "app.py").write_text(HEAD_APP)
    for name, text in (extra or {}).items():
        (work / name).write_text(text)
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "docstring")
    subprocess.run(["git", "-C", str(work), "push", "-q", str(bare), "HEAD:refs/heads/changes",
                    "HEAD:refs/pull/2/head"], check=True)
    patches = {}
    for name in ["app.py", *(extra or {})]:
        diff = _git(work, "diff", "HEAD~1", "HEAD", "--", name)
        patches[name] = diff[diff.index("@@"):]
    return base / "remotes", patches


class World:
    def __init__(self, gh, providers: dict[str, FakeProvider], service: Service, tmp: Path):
        self.gh, self.providers, self.service, self.tmp = gh, providers, service, tmp

    def ask(self, body: str, comment_id: int = 7001) -> None:
        """`body` as a new comment on pull request #2, delivered signed to `bot serve`."""
        self.gh.add_comment(REPO, PR, body, user="Codertocat", comment_id=comment_id)
        data = payload("issue_comment.created", body)
        data["comment"]["id"] = comment_id
        data["issue"].update(number=PR, pull_request={"url": f"{self.gh.url}/repos/{REPO}/pulls/{PR}"})
        assert self.service.deliver(data).status_code == 202

    def reviews(self) -> list[dict]:
        return self.gh.submitted_reviews(REPO, PR)

    def answer(self, timeout: float = 240) -> str:
        """The tracking comment once it is final (it carries a run marker)."""
        def final():
            return [c for c in self.gh.comments(REPO, PR) if "<!-- bot:run " in (c.get("body") or "")]
        return self.gh.wait_for(final, timeout=timeout)[0]["body"]


@contextlib.contextmanager
def open_world(tmp_path: Path, bot_yml: str | None = None, extra: dict[str, str] | None = None):
    """`bot serve` with codex and claude, each against its own fake provider (so each agent's script
    is its own while they run at the same time)."""
    gh = seeded_github()
    remotes, patches = make_review_remote(tmp_path, bot_yml, extra)
    for name, patch in patches.items():
        gh.add_pull_file(REPO, PR, name, patch)
    with FakeProvider() as codex, FakeProvider() as claude:
        env = service_env(tmp_path, gh, remotes, codex.url, BOT_CLAUDE_BASE_URL=claude.url,
                          ANTHROPIC_API_KEY="sk-ant-test-operator-key-0123456789",
                          BOT_RELAY_RETRIES="0")  # a scripted provider failure reaches the CLI at once
        service = Service(env, tmp_path / "serve.log").start()
        try:
            yield World(gh, {"codex": codex, "claude": claude}, service, tmp_path)
        finally:
            service.stop()
            gh.stop()
