"""Who the bot is (bot/permissions.py) follows the handle it is handed, not the process environment."""
from __future__ import annotations

import pytest

from bot import permissions


def test_the_bots_own_accounts_are_those_of_the_handle_it_is_handed():
    assert permissions.own_accounts("Helper") == {"helper", "helper[bot]"}


def test_a_user_account_named_as_the_handed_handle_counts_as_the_bot():
    assert permissions.is_bot_author("Helper", "User", "helper")


def test_the_bot_posts_as_github_actions_only_when_it_is_told_it_runs_in_actions(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    assert permissions.own_logins("helper", in_actions=False) == {"helper[bot]"}
