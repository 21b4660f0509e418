"""The tracking comment's first header never names an agent the job will not run: with no agent
in the command, the repository's `.github/bot.yml` may choose another than the operator's default,
and it is only read once the workspace is ready."""
from __future__ import annotations

import subprocess

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import configure_app, enqueue
from tests.spine.service import REPO, make_remote, seeded_github
from tests.spine.test_worker import drain, spec


def _choose_in_bot_yml(remotes, agent: str) -> None:
    """One commit on main adding `.github/bot.yml` with `default_agent: <agent>`."""
    bare, work = remotes / f"{REPO}.git", remotes.parent / "with-config"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(work)]
    subprocess.run(["git", "clone", "-q", str(bare), str(work)], check=True)
    (work / ".github").mkdir()
    (work / ".github" / "bot.yml").write_text(f"default_agent: {agent}\n")
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "bot config"], check=True)
    subprocess.run(git + ["push", "-q", "origin", "HEAD:main"], check=True)


@pytest.fixture
def gh(monkeypatch, tmp_path):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    remotes = make_remote(tmp_path)
    _choose_in_bot_yml(remotes, "gemini")
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{remotes}")
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "codex")
    from bot.github import client as github
    github._permissions.clear()
    yield fake
    fake.stop()


async def test_the_first_header_does_not_name_the_default_agent_the_repository_overrides(gh):
    gh.add_comment(REPO, 1, "@bot explain", user="Codertocat", comment_id=77)
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec(agent=None))
    await drain(db, 1)
    first = gh.calls_to("POST", rf"/repos/{REPO}/issues/1/comments$")[0].body["body"]
    assert "codex" not in first and "On it for @Codertocat" in first
