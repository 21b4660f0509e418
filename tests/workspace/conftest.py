"""Real git remotes for the workspace tests: bare repositories served as BOT_GIT_BASE_URL=file://…"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "Octo Cat",
           "GIT_AUTHOR_EMAIL": "octo@example.com", "GIT_COMMITTER_NAME": "Octo Cat",
           "GIT_COMMITTER_EMAIL": "octo@example.com", "LC_ALL": "C"}


def sh_git(*args: str, cwd: Path | str | None = None, stdin: str | None = None) -> str:
    done = subprocess.run(["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=GIT_ENV,
                          input=stdin, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"git {args} failed: {done.stderr}")
    return done.stdout.strip()


class RemoteHost:
    """A directory of bare repositories standing in for github.com's git side."""

    def __init__(self, root: Path):
        self.root = root

    def path(self, full_name: str) -> Path:
        return self.root / f"{full_name}.git"

    def create(self, full_name: str, files: dict[str, str], branch: str = "main") -> str:
        bare = self.path(full_name)
        bare.parent.mkdir(parents=True, exist_ok=True)
        sh_git("init", "--quiet", "--bare", "-b", branch, str(bare))
        return self.commit(full_name, branch, files, "initial", parent=None)

    def commit(self, full_name: str, branch: str, files: dict[str, str | None],
               message: str = "change", parent: str | None = "branch", ref: str | None = None) -> str:
        """Commit `files` (None deletes) on top of `branch` (or a root commit); returns the sha."""
        bare = self.path(full_name)
        target = ref or f"refs/heads/{branch}"
        base = None if parent is None else sh_git("rev-parse", target if parent == "branch" else parent,
                                                  cwd=bare)
        index = bare / "tmp-index"
        env_index = {"GIT_INDEX_FILE": str(index)}
        if base:
            _git_env(["read-tree", base], bare, env_index)
        else:
            index.unlink(missing_ok=True)
        for name, content in files.items():
            if content is None:
                _git_env(["update-index", "--force-remove", name], bare, env_index)
                continue
            blob = sh_git("hash-object", "-w", "--stdin", cwd=bare, stdin=content)
            _git_env(["update-index", "--add", "--cacheinfo", f"100644,{blob},{name}"], bare, env_index)
        tree = _git_env(["write-tree"], bare, env_index)
        index.unlink(missing_ok=True)
        sha = sh_git("commit-tree", tree, *(["-p", base] if base else []), "-m", message, cwd=bare)
        sh_git("update-ref", target, sha, cwd=bare)
        return sha

    def rev(self, full_name: str, ref: str) -> str:
        return sh_git("rev-parse", ref, cwd=self.path(full_name))

    def show(self, full_name: str, ref: str, path: str) -> str:
        return sh_git("show", f"{ref}:{path}", cwd=self.path(full_name))

    def exists(self, full_name: str, ref: str) -> bool:
        try:
            self.rev(full_name, ref)
            return True
        except RuntimeError:
            return False

    def open_pull(self, base: str, number: int, branch: str, files: dict[str, str | None],
                  head_repo: str | None = None) -> str:
        """A PR: `branch` on head_repo (a fork, or base) from base's main, mirrored to refs/pull/N/head."""
        head_repo = head_repo or base
        if head_repo != base and not self.path(head_repo).exists():
            self.path(head_repo).parent.mkdir(parents=True, exist_ok=True)
            sh_git("clone", "--quiet", "--bare", str(self.path(base)), str(self.path(head_repo)))
        start = self.rev(head_repo, "refs/heads/main")
        sh_git("update-ref", f"refs/heads/{branch}", start, cwd=self.path(head_repo))
        sha = self.commit(head_repo, branch, files, f"PR {number}")
        self.sync_pull(base, number, branch, head_repo)
        return sha

    def sync_pull(self, base: str, number: int, branch: str, head_repo: str) -> None:
        """What GitHub does on every push to a PR branch: refresh refs/pull/N/head in the base."""
        sh_git("fetch", "--quiet", str(self.path(head_repo)),
               f"+refs/heads/{branch}:refs/pull/{number}/head", cwd=self.path(base))


def _git_env(args: list[str], cwd: Path, extra: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env={**GIT_ENV, **extra}, capture_output=True,
                          text=True)
    if done.returncode:
        raise RuntimeError(f"git {args} failed: {done.stderr}")
    return done.stdout.strip()


@pytest.fixture
def remote(tmp_path, monkeypatch) -> RemoteHost:
    root = tmp_path / "remote"
    root.mkdir()
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{root}")
    return RemoteHost(root)


@pytest.fixture
def widget(remote) -> str:
    """octo/widget with a README, a source file and a workflow."""
    remote.create("octo/widget", {"README.md": "# widget\n", "src/app.py": "print('hi')\n",
                                  ".github/workflows/ci.yml": "on: push\n"})
    return "octo/widget"


@pytest.fixture
def github():
    """The spine's fake GitHub REST server with octo/widget and alice's fork registered."""
    from tests.fakes.github import FakeGitHub

    with FakeGitHub() as fake:
        fake.add_repo("octo/widget")
        fake.add_repo("alice/widget")
        yield fake


@pytest.fixture
def token(github) -> str:
    """An installation token minted by the fake (opaque, like GitHub's)."""
    import httpx
    import jwt

    app_jwt = jwt.encode({"iss": "1"}, "a-test-signing-key-that-is-32-bytes-long", algorithm="HS256")
    reply = httpx.post(f"{github.url}/app/installations/1/access_tokens",
                       headers={"authorization": f"Bearer {app_jwt}"})
    return reply.json()["token"]


@pytest.fixture
async def api(github, token):
    import gidgethub.httpx
    import httpx

    async with httpx.AsyncClient() as client:
        yield gidgethub.httpx.GitHubAPI(client, "bot-tests", oauth_token=token, base_url=github.url)
