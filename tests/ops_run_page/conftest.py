"""The run page's fixtures: the settings page's fake GitHub, which also answers GET /repos/{o}/{r}
as GitHub does for the viewer's token (404 for a private repository they cannot see), and runs
recorded in the bot database the way the recorder writes them."""
from __future__ import annotations

import subprocess

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.record.recorder import Recorder
from bot.settings import routes as settings
from bot.web import run_page
from bot.workspace import worktrees
from tests.browser import browser_fixture, page_fixture  # noqa: F401 (the browser tests' fixtures)
from tests.entry_settings import current, database, handed
from tests.settings.conftest import use_fake_github
from tests.settings.fake_github_oauth import ROLE_ORDER, FakeGitHubOAuth

REPO = "octo/app"
SECRET = "ghp_" + "S" * 36  # a token shape: masked wherever it was recorded


class FakeGitHubRepos(FakeGitHubOAuth):
    def __init__(self):
        super().__init__()
        self.private: dict[str, bool] = {}

    def api(self, path, login, query=None):
        parts = path.strip("/").split("/")
        if len(parts) == 3 and parts[0] == "repos" and path not in self.failures:
            full_name = f"{parts[1]}/{parts[2]}"
            role = self.roles.get((full_name, login))
            if full_name not in self.private or (self.private[full_name] and role is None):
                return 404, {"message": "Not Found"}, {}
            rank = ROLE_ORDER.index(role) if role else -1
            return 200, {"id": self.repo_ids.get(full_name, 0), "full_name": full_name,
                         "private": self.private[full_name],
                         "permissions": {"pull": rank >= 0 or not self.private[full_name], "push": rank >= 2,
                                         "admin": rank >= 4}}, {}
        return super().api(path, login, query)


@pytest.fixture
def github(monkeypatch):
    with FakeGitHubRepos() as fake:
        use_fake_github(fake, monkeypatch)
        fake.private[REPO] = True
        fake.add_repo(REPO, octocat="read")
        yield fake


def app() -> Starlette:
    return handed(Starlette(routes=[*settings.routes, *run_page.routes]))


@pytest.fixture
def client(github):
    with TestClient(app(), follow_redirects=False) as test_client:
        yield test_client


def _git(*args: str, cwd=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def mirror_with_commit(tmp_path) -> tuple[str, str]:
    """The bot's mirror of REPO holding a base commit and the bot's commit on top; their shas."""
    source = tmp_path / "source"
    _git("init", "-q", "-b", "main", str(source))
    (source / "hello.py").write_text("print('hello')\n")
    _git("-C", str(source), "add", ".")
    _git("-C", str(source), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "base")
    base = _git("-C", str(source), "rev-parse", "HEAD")
    (source / "hello.py").write_text("print('hello, world')\n")
    _git("-C", str(source), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qam", "bot")
    commit = _git("-C", str(source), "rev-parse", "HEAD")
    mirror = worktrees.mirror_path(REPO, current().data_dir)
    mirror.parent.mkdir(parents=True, exist_ok=True)
    _git("clone", "--bare", "-q", str(source), str(mirror))
    return base, commit


def record_run(base: str | None = None, status: str | None = "ok", conversation: str = f"{REPO}#12") -> str:
    recorder = Recorder(database(), secrets=[])
    run_id = recorder.start_run(agent="codex", conversation=conversation, base_commit=base)
    recorder.update_run(run_id, agent_version="0.171.0", session_id="sess-4242", resumed=0)
    recorder.record(run_id, "enforced", "tool_call", tool="read_file", args={"path": "hello.py"},
                    outcome="ok", duration_ms=1.5)
    recorder.record(run_id, "attested", "text", raw='{"type":"message","text":"I read hello.py, token ' + SECRET + '"}')
    recorder.record(run_id, "enforced", "model_call", outcome="ok",
                    raw='{"tokens":{"input_tokens":1200,"output_tokens":300},"cost_usd":0.0123}')
    recorder.declare_gap(run_id, "codex's context compaction")
    recorder.attach_egress(run_id, [{"host": "api.openai.com", "allowed": True, "bytes_up": 10, "bytes_down": 20}])
    if status is not None:
        recorder.finish_run(run_id, status)
    return run_id
