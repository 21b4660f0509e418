"""One home for "who may make the bot act" (bot/permissions.py), used by intake, worker and Action."""
from __future__ import annotations

import pytest

from bot import permissions
from bot.config import Settings
from bot.episode.stop import Stop
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job.context import Job
from bot.job.modes import GitHubMode


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_members_and_collaborators_pass_the_request_path_check(association):
    assert permissions.association_may_trigger(association)


@pytest.mark.parametrize("association", ["CONTRIBUTOR", "FIRST_TIME_CONTRIBUTOR", "FIRST_TIMER", "NONE", None])
def test_everyone_else_is_refused_on_the_request_path(association):
    assert not permissions.association_may_trigger(association)


@pytest.mark.parametrize(("login", "kind"), [("dependabot[bot]", "Bot"), ("bot", "User"), ("BOT[bot]", "User"),
                                             ("github-actions[bot]", "Bot"), ("renovate", "Bot")])
def test_bots_and_the_bot_itself_never_trigger(login, kind):
    assert permissions.is_bot_author(login, kind, "bot")


def test_a_person_is_not_a_bot():
    assert not permissions.is_bot_author("octocat", "User", "bot")


def test_a_minimum_level_means_it_and_every_stronger_one():
    assert permissions.levels_from("write") == ("write", "maintain", "admin")


def test_the_intake_and_the_action_use_the_one_rule():
    from bot.cli import action
    from bot.intake import decide
    from bot.web import intake
    assert intake.decide is action.decide is decide.decide
    assert decide.association_may_trigger is action.association_may_trigger is permissions.association_may_trigger
    assert decide.is_bot_author is permissions.is_bot_author


class BrokenThread:
    async def permission(self, login):
        raise TypeError("a bug in our own code")


async def test_a_bug_in_the_permission_check_is_not_reported_as_a_missing_app_permission():
    """Only GitHub's refusal points at the App's Metadata permission; our own bug stays a bug."""
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="x")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(BrokenThread()), settings=Settings({}))
    with pytest.raises(TypeError):
        await ctx.mode.permission(ctx)


class RefusingThread:
    async def permission(self, login):
        from gidgethub import BadRequest
        raise BadRequest(403, "Resource not accessible by integration")


async def test_githubs_refusal_of_the_permission_check_names_what_to_grant():
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="x")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(RefusingThread()), settings=Settings({}))
    with pytest.raises(Stop) as stop:
        await ctx.mode.permission(ctx)
    assert "Metadata: read" in stop.value.text


def test_an_assignment_to_the_handle_or_its_app_is_to_the_bot():
    assert permissions.own_accounts("bot") == {"bot", "bot[bot]"}


def test_the_app_posts_as_its_bot_account():
    assert permissions.own_logins("bot", in_actions=False) == {"bot[bot]"}


def test_in_actions_the_bot_posts_as_github_actions():
    assert permissions.own_logins("bot", in_actions=True) == {"bot[bot]", "github-actions[bot]"}


def test_the_client_and_the_triggers_read_the_one_list_of_own_logins():
    from bot.github import client
    from bot.intake import triggers
    assert client.own_logins is permissions.own_logins
    assert triggers.own_accounts is permissions.own_accounts
