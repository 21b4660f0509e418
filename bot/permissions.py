"""Who may make the bot act: one home for the decision, used by the service's intake and worker
and by the Action.

Two checks, in order: on the request path, the comment's `author_association` (no API call) lets
only owners, members and collaborators through, and never a bot: a pre-filter only. Then, before
anything acts (an episode, a review, a stop, an effect), bot/job/authority.py asks GitHub for the
requester's collaborator permission, which must be one the repository's `.github/bot.yml` allows
(write, maintain or admin by default: `RepoConfig.may_trigger`).
"""
from __future__ import annotations

TRUSTED_ASSOCIATIONS = ("OWNER", "MEMBER", "COLLABORATOR")
# GitHub's collaborator permission levels, weakest first (`.github/bot.yml` names one of them)
PERMISSION_LEVELS = ("read", "triage", "write", "maintain", "admin")


def association_may_trigger(association: str | None) -> bool:
    return association in TRUSTED_ASSOCIATIONS


ACTIONS_LOGIN = "github-actions[bot]"  # who posts with a workflow's GITHUB_TOKEN


def own_accounts(handle: str) -> set[str]:
    """The bot's accounts, lower-case, as an assignment or a review request names them: the
    handle (the settings' BOT_HANDLE) and its App's `<handle>[bot]`."""
    handle = handle.lower()
    return {handle, f"{handle}[bot]"}


def own_logins(handle: str, in_actions: bool) -> set[str]:
    """Who posts as the bot, lower-case: its GitHub App as `<handle>[bot]`; as an Action
    (`in_actions`: the runner's GITHUB_ACTIONS), with the workflow's GITHUB_TOKEN, as github-actions[bot]."""
    logins = {f"{handle.lower()}[bot]"}
    if in_actions:
        logins.add(ACTIONS_LOGIN)
    return logins


def is_bot_author(login: str, user_type: str, handle: str) -> bool:
    """Bots never trigger the bot (another App, a workflow, the bot itself): no loops."""
    login = login.lower()
    return user_type == "Bot" or login.endswith("[bot]") or login in own_accounts(handle) | {ACTIONS_LOGIN}


def levels_from(minimum: str) -> tuple[str, ...]:
    """`write` → ("write", "maintain", "admin")."""
    return PERMISSION_LEVELS[PERMISSION_LEVELS.index(minimum):]
