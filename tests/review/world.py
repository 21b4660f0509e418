"""A pull request with a known bug, served by the fake GitHub (its diff from real git), a file://
remote holding its head, and `bot serve` wired to one fake provider per agent (used by the
tests in this folder and by bench/review.py). `open_pull` adds more pull requests to the same
repository; `open_world(signed_in=True)` puts GitHub's sign-in in front of the fake GitHub (one
address for the App's and a person's calls, tests/settings/app_github.py) so the service's
settings pages can be used signed in."""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider
from tests.settings.app_github import AppGitHub
from tests.spine.helpers import app_key, payload
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


def make_review_remote(base: Path, bot_yml: str | None = None, extra: dict[str, str] | None = None,
                       on_main: dict[str, str] | None = None) -> tuple[Path, dict[str, str]]:
    """A bare repository whose main has app.py (and `bot_yml` as .github/bot.yml, and the `on_main`
    files) and whose refs/pull/2/head brings the bug (and the `extra` files); returns (the remotes
    folder, each changed file's patch as GitHub's files API gives it)."""
    work = base / "seed"
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    (work / "app.py").write_text(BASE_APP)
    for name, text in (on_main or {}).items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    if bot_yml is not None:
        (work / ".github").mkdir()
        (work / ".github" / "bot.yml").write_text(bot_yml)
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "initial")
    _git(work, "tag", "pr-base")  # the pull request's base, where main stays on the remote
    bare = base / "remotes" / f"{REPO}.git"
    bare.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    (work / "app.py").write_text(HEAD_APP)
    for name, text in (extra or {}).items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
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


def pull_files_of(work: Path) -> dict[str, str]:
    """Each file the pull request (pr-base...HEAD of `work`) changes, with its patch as GitHub's files API gives it."""
    patches = {}
    for name in _git(work, "diff", "--name-only", "pr-base", "HEAD").split():
        diff = _git(work, "diff", "pr-base", "HEAD", "--", name)
        patches[name] = diff[diff.index("@@"):]
    return patches


class World:
    def __init__(self, gh, providers: dict[str, FakeProvider], service: Service, tmp: Path,
                 github: AppGitHub | None = None):
        self.gh, self.providers, self.service, self.tmp = gh, providers, service, tmp
        self.github = github  # sign-in and a person's calls, in front of `gh` (open_world(signed_in=True))
        self.pushes: list[str] = []  # heads announced by synchronize()

    def open_pull(self, number: int, files: dict[str, str]) -> None:
        """Pull request `number`: `files` changed on a branch of its own from the base of #2, pushed
        to the remote as refs/pull/<number>/head; the fake lists it and its files."""
        work, branch = self.tmp / "seed", f"change-{number}"
        current = _git(work, "rev-parse", "--abbrev-ref", "HEAD").strip()
        _git(work, "checkout", "-q", "-b", branch, "pr-base")
        try:
            for name, text in files.items():
                (work / name).parent.mkdir(parents=True, exist_ok=True)
                (work / name).write_text(text)
            _git(work, "add", ".")
            _git(work, "commit", "-qm", f"change {number}")
            subprocess.run(["git", "-C", str(work), "push", "-q", str(self.tmp / "remotes" / f"{REPO}.git"),
                            f"HEAD:refs/heads/{branch}", f"HEAD:refs/pull/{number}/head"], check=True)
            patches = pull_files_of(work)
        finally:
            _git(work, "checkout", "-q", current)
        self.gh.add_pull(REPO, number, head_ref=branch, title=f"Change {number}", user="Codertocat")
        for name, patch in patches.items():
            self.gh.add_pull_file(REPO, number, name, patch)

    def head(self) -> str:
        return _git(self.tmp / "seed", "rev-parse", "HEAD").strip()

    def push(self, files: dict[str, str], rewrite: bool = False) -> str:
        """A push to the pull request's branch changing `files` (`rewrite`: amending the head, a
        force-push that drops it); the fake's files API follows. Returns the new head."""
        work = self.tmp / "seed"
        for name, text in files.items():
            (work / name).write_text(text)
        _git(work, "add", ".")
        _git(work, "commit", "-q", *(["--amend"] if rewrite else []), "-m", "push")
        subprocess.run(["git", "-C", str(work), "push", "-qf", str(self.tmp / "remotes" / f"{REPO}.git"),
                        "HEAD:refs/heads/changes", "HEAD:refs/pull/2/head"], check=True)
        with self.gh._lock:
            self.gh._state(REPO)["files"][PR] = []
        for name, patch in pull_files_of(work).items():
            self.gh.add_pull_file(REPO, PR, name, patch)
        return self.head()

    def synchronize(self, sender: str = "Codertocat") -> dict:
        """GitHub's `pull_request.synchronize` for the head pushed last, delivered signed (the
        recorded `opened` payload with the action, `after` and the pull request's new state)."""
        data = payload("pull_request.opened", "")
        head = self.head()
        data.update(action="synchronize", after=head)
        data["pull_request"].update(number=PR, updated_at=f"2026-12-01T00:00:{len(self.pushes):02d}Z")
        data["pull_request"]["head"]["sha"] = head
        data["sender"]["login"] = sender
        self.pushes.append(head)
        answered = self.service.deliver(data, event="pull_request")
        assert answered.status_code == 202
        return answered.json()

    def answers(self) -> list[str]:
        return [c["body"] for c in self.gh.comments(REPO, PR) if "<!-- bot:run " in (c.get("body") or "")]

    def ask(self, body: str, comment_id: int = 7001, number: int = PR) -> None:
        """`body` as a new comment on pull request `number` (#2), delivered signed to `bot serve`."""
        self.gh.add_comment(REPO, number, body, user="Codertocat", comment_id=comment_id)
        data = payload("issue_comment.created", body)
        data["comment"]["id"] = comment_id
        data["issue"].update(number=number, pull_request={"url": f"{self.gh.url}/repos/{REPO}/pulls/{number}"})
        assert self.service.deliver(data).status_code == 202

    def reviews(self, number: int = PR) -> list[dict]:
        return self.gh.submitted_reviews(REPO, number)

    def answer(self, timeout: float = 240, nth: int = 1, number: int = PR) -> str:
        """The `nth` tracking comment of pull request `number` once it is final (it carries a run marker)."""
        def final():
            found = [c for c in self.gh.comments(REPO, number) if "<!-- bot:run " in (c.get("body") or "")]
            return found if len(found) >= nth else []
        return self.gh.wait_for(final, timeout=timeout)[nth - 1]["body"]


@contextlib.contextmanager
def open_world(tmp_path: Path, bot_yml: str | None = None, extra: dict[str, str] | None = None,
               on_main: dict[str, str] | None = None, signed_in: bool = False, **env_extra: str):
    """`bot serve` with codex and claude, each against its own fake provider (so each agent's script
    is its own while they run at the same time); `on_main`: files of the default branch only;
    `signed_in`: GitHub's sign-in in front of the fake GitHub (`World.github`); `env_extra` adds to
    the service's environment."""
    github = _signing_in_github() if signed_in else None
    gh = github.rest if github else seeded_github()
    remotes, patches = make_review_remote(tmp_path, bot_yml, extra, on_main)
    for name, patch in patches.items():
        gh.add_pull_file(REPO, PR, name, patch)
    if github:
        env_extra = {"GITHUB_API_URL": github.url, "BOT_GITHUB_OAUTH_URL": github.url,
                     "GITHUB_CLIENT_ID": github.client_id, "GITHUB_CLIENT_SECRET": github.client_secret, **env_extra}
    with FakeProvider() as codex, FakeProvider() as claude:
        env = service_env(tmp_path, gh, remotes, codex.url, BOT_CLAUDE_BASE_URL=claude.url,
                          ANTHROPIC_API_KEY="sk-ant-test-operator-key-0123456789",
                          BOT_RELAY_RETRIES="0",  # a scripted provider failure reaches the CLI at once
                          **env_extra)
        service = Service(env, tmp_path / "serve.log").start()
        try:
            yield World(gh, {"codex": codex, "claude": claude}, service, tmp_path, github)
        finally:
            service.stop()
            if github:
                github.__exit__(None, None, None)
            else:
                gh.stop()


def _signing_in_github() -> AppGitHub:
    """The sign-in fake in front of a fake GitHub seeded as tests/spine/service.py seeds it."""
    github = AppGitHub(app_key()[1]).__enter__()
    _seed(github.rest)
    return github


def _seed(gh: FakeGitHub) -> None:
    gh.add_repo(REPO)
    gh.add_issue(REPO, 1, title="Spelling error in the README file", user="Codertocat")
    gh.set_permission(REPO, "Codertocat", "admin")
    gh.add_pull(REPO, 2, head_ref="changes", title="Update the README with new information.", user="Codertocat")
