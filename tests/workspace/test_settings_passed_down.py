"""The workspace takes the operator's settings from its caller, never from the environment: what
the settings it was handed say wins over whatever the process environment says now."""
from __future__ import annotations

from bot.config import Settings
from bot.workspace import effects, pool, worktrees
from bot.workspace.effects import Request
from bot.workspace.git import GitProfile, git_env
from bot.workspace.outcome import Outcome
from bot.workspace.repo_config import RepoConfig
from tests.entry_settings import current

from .conftest import sh_git


def test_a_pushed_branch_links_to_the_git_host_it_was_pushed_to_whatever_the_environment_says(monkeypatch):
    monkeypatch.setenv("BOT_GIT_BASE_URL", "https://elsewhere.example.com")
    out = Outcome("pushed", "", "3f2a9c1aaaa", "8c1e2d4bbbb", "1 file changed", repo="octo/widget",
                  branch="feature", git_base_url="https://ghe.example.com")
    assert out.branch_link() == "[`feature` on octo/widget](https://ghe.example.com/octo/widget/tree/feature)"


def test_a_repository_without_a_default_agent_takes_the_operators_default_it_is_handed(monkeypatch):
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "codex")
    assert RepoConfig().agent("gemini") == "gemini"


def test_a_repositorys_own_default_agent_wins_over_the_operators():
    assert RepoConfig(default_agent="opencode").agent("gemini") == "opencode"


def handed(**changes: str) -> Settings:
    """The settings of the environment as the test set it, with `changes`, as an entry point hands them."""
    return Settings({**current().environ, **changes})


def test_the_bots_git_commits_as_the_identity_it_is_handed(monkeypatch):
    monkeypatch.setenv("BOT_GIT_NAME", "From The Environment")
    env = git_env(profile=GitProfile.of(Settings({"BOT_GIT_NAME": "Handed Bot", "BOT_HANDLE": "helper"})))
    assert (env["GIT_AUTHOR_NAME"], env["GIT_COMMITTER_EMAIL"]) == ("Handed Bot",
                                                                    "helper[bot]@users.noreply.github.com")


async def test_a_worktree_is_prepared_under_the_data_dir_it_is_handed(remote, widget, tmp_path, monkeypatch):
    settings = handed(BOT_DATA_DIR=str(tmp_path / "handed"))
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "from-the-environment"))
    wt = await worktrees.prepare(widget, f"{widget}#1", settings)
    assert wt.path.is_relative_to(tmp_path / "handed") and wt.mirror.is_relative_to(tmp_path / "handed")


async def test_a_worktree_is_fetched_from_the_git_host_it_is_handed(remote, widget, monkeypatch):
    settings = handed()
    monkeypatch.setenv("BOT_GIT_BASE_URL", "file:///nowhere")
    wt = await worktrees.prepare(widget, f"{widget}#1", settings)
    assert wt.base_sha == remote.rev(widget, "refs/heads/main")


async def test_a_change_is_pushed_to_the_git_host_the_worktree_was_prepared_with(remote, widget, github, api,
                                                                                token, monkeypatch):
    wt = await worktrees.prepare(widget, f"{widget}#1", handed(BOT_GIT_NAME="Handed Bot"), token=token)
    (wt.path / "src/app.py").write_text("print('hello')\n")
    monkeypatch.setenv("BOT_GIT_BASE_URL", "file:///nowhere")
    monkeypatch.setenv("BOT_GIT_NAME", "From The Environment")
    request = Request(agent="codex", text="fix the greeting", requester_login="alice", requester_id=4242, number=1)
    out = await effects.apply(wt, request, api, token)
    assert out.kind == "pull_request"
    assert sh_git("log", "-1", "--format=%an", out.branch, cwd=remote.path(widget)) == "Handed Bot"


async def test_no_more_spares_are_kept_than_the_settings_handed_allow(remote, widget, monkeypatch):
    monkeypatch.setenv("BOT_SPARE_WORKTREES", "2")
    wt = await worktrees.prepare(widget, f"{widget}#1", handed(BOT_SPARE_WORKTREES="0"))
    await worktrees.remove(wt)
    assert pool.spares(wt.mirror) == [] and not wt.path.exists()


async def test_mirrors_are_collected_past_the_size_the_settings_handed_allow(remote, widget, monkeypatch):
    monkeypatch.setenv("BOT_MIRRORS_MAX_BYTES", str(1 << 40))
    wt = await worktrees.prepare(widget, f"{widget}#1", handed(BOT_MIRRORS_MAX_BYTES="0"))
    await worktrees.remove(wt)
    assert not wt.mirror.exists()
