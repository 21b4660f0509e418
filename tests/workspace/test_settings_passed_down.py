"""The workspace takes the operator's settings from its caller, never from the environment: what
the settings it was handed say wins over whatever the process environment says now."""
from __future__ import annotations

from bot.workspace.outcome import Outcome
from bot.workspace.repo_config import RepoConfig


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
