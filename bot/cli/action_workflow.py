"""`bot action workflow`: the workflow file a repository adds to use the Action, ready to commit.

The `uses:` line names where this Action really lives: `--uses OWNER/REPO@REF`, else the
repository and commit of the checkout the command runs from (its `origin` remote, pinned to the
full commit SHA, as GitHub advises for third-party actions). The pre-filter `if:` starts a runner
only for a comment that mentions the handle and was not written by a bot; the `concurrency`
group queues the turns of one thread (never cancelling the running one).

With a `.github/bot.yml` (`--config PATH`, else the working directory's, when it has one) that
declares scheduled automations, the workflow also runs on their cron lines
(bot/cli/action_automations.py).

With triggers (`--triggers labels,assignment,…` or `all`, or `--config` naming a `.github/bot.yml`
whose `triggers:` turns them on; docs/reviews.md) it also subscribes to the `issues` and
`pull_request` events they come by, and the `if:` lets exactly those through: a `bot:` label, an
assignment, a review request, a pull request opened or made ready (not a draft unless `drafts:` is
on). Without, it listens to mentions only: in a comment, a review comment, a submitted review's
body or a new issue.

`examples()` is the files of `.github/workflows/examples/`, written from `render` by
`scripts/action-examples` (a test holds them to it byte for byte).
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from adapters import base as adapters
from adapters.facts import ActionInputs
from bot import config
from bot.cli import action_automations
from bot.errors import BotError
from bot.trigger_table import TRIGGERS as TRIGGER_TABLE
from bot.workspace.repo_config import ConfigError, RepoConfig, parse

_REMOTE = re.compile(r"(?:github\.com[:/])(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
_HANDLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$")

TEMPLATE = """\
name: agent bot
on:
{events}
permissions: {{}}
# the turns of one thread run one at a time, in order
concurrency:
  group: agent-bot-${{{{ github.event.issue.number || github.event.pull_request.number }}}}
  cancel-in-progress: false
jobs:
  answer:
{condition}
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    permissions: {{contents: write, issues: write, pull-requests: write, actions: write}}
    steps:
      - uses: {uses}
        with:
          handle: {handle}
          agent: {agent}
{key_line}{tier_input}{step_env}"""


# every event whose body may hold a mention, and the activity that brings it
COMMENT_EVENTS = {"issue_comment": ("created",), "pull_request_review_comment": ("created",),
                  "pull_request_review": ("submitted",), "issues": ("opened",)}
MENTION_IF = """\
    # a runner starts only for a comment or review that mentions the handle, not written by a bot
    if: >-
      contains(github.event.comment.body || github.event.review.body || github.event.issue.body, '@{handle}')
      && github.event.sender.type != 'Bot'"""
# the automatic triggers the workflow can let in, by their bot.yml key (bot/trigger_table.py)
OFFERED = tuple(trigger for trigger in TRIGGER_TABLE if trigger.in_workflow)
TRIGGERS = tuple(trigger.key for trigger in OFFERED)
TRIGGER_EVENTS: dict[str, dict[str, tuple[str, ...]]] = {trigger.key: dict(trigger.events) for trigger in OFFERED}
TRIGGER_IF = {trigger.key: trigger.workflow_if for trigger in OFFERED}
TYPE_ORDER = ("created", "submitted", "opened", "ready_for_review", "labeled", "assigned", "review_requested")


class WorkflowError(BotError, ValueError):
    """The workflow cannot be written as asked; the message says what to pass."""


@dataclass(frozen=True)
class Triggers:
    """The automatic triggers the workflow must let in (`.github/bot.yml`'s `triggers:`)."""

    names: tuple[str, ...] = ()
    drafts: bool = False


def triggers_from(names: str | None = None, config_path: str | None = None) -> Triggers:
    """`--triggers a,b` (or `all`) and/or the triggers a bot.yml turns on."""
    chosen: set[str] = set()
    drafts = False
    if config_path:
        parsed = _config(config_path)
        chosen |= {trigger.key for trigger in OFFERED if trigger.is_on(parsed)}
        drafts = bool(parsed.triggers.drafts)
    for name in filter(None, (part.strip() for part in (names or "").split(","))):
        if name == "all":
            chosen |= set(TRIGGERS)
        elif name in TRIGGERS:
            chosen.add(name)
        else:
            raise WorkflowError(f"unknown trigger {name!r} (one of {', '.join(TRIGGERS)}, or all)")
    return Triggers(tuple(name for name in TRIGGERS if name in chosen), drafts)


def automations_from(config_path: str | None) -> action_automations.Declared:
    """The automations the `.github/bot.yml` at `config_path` declares (none without one)."""
    return action_automations.declared(_config(config_path)) if config_path else action_automations.NONE


def _config(path: str) -> RepoConfig:
    try:
        return parse(Path(path).read_text(), source=path)
    except OSError as exc:
        raise WorkflowError(f"cannot read {path}: {exc.strerror}") from None
    except ConfigError as exc:
        raise WorkflowError(str(exc)) from None


def render(uses: str, handle: str = "bot", agent: str = "claude", triggers: Triggers = Triggers(),
           subscription: bool = False, sandbox_tier: int | None = None,
           automations: action_automations.Declared = action_automations.NONE) -> str:
    """The workflow file; `subscription` passes a Claude subscription token instead of an API key,
    `sandbox_tier` the action's `sandbox-tier` (0 on a runner without passwordless sudo),
    `automations` the schedules .github/bot.yml declares (bot/cli/action_automations.py)."""
    if not _HANDLE.match(handle):
        raise WorkflowError(f"{handle!r} is not a GitHub login")
    if agent not in adapters.names():
        raise WorkflowError(f"unknown agent {agent!r} (one of {', '.join(adapters.names())})")
    inputs = adapters.get(agent).action_inputs
    if subscription and (inputs is None or inputs.subscription is None):
        runs = [name for name in adapters.names() if (adapters.get(name).action_inputs or _NONE).subscription]
        raise WorkflowError(f"only {', '.join(runs)} runs on a subscription, not {agent}")
    if sandbox_tier not in (None, 0, 1):
        raise WorkflowError(f"sandbox tier {sandbox_tier} does not exist (0 or 1)")
    tier_input = "" if sandbox_tier is None else f'          sandbox-tier: "{sandbox_tier}"\n'
    key_line, step_env = _key_lines(agent, inputs, subscription)
    condition = _trigger_if(handle, triggers) if triggers.names else MENTION_IF.format(handle=handle)
    events = "\n".join(filter(None, (_events(triggers), action_automations.on_lines(automations))))
    return TEMPLATE.format(uses=uses, handle=handle, agent=agent, key_line=key_line, step_env=step_env,
                           events=events, condition=action_automations.let_in(condition, automations),
                           tier_input=tier_input)


_NONE = ActionInputs(("", ""))


def _key_lines(agent: str, inputs: ActionInputs | None, subscription: bool) -> tuple[str, str]:
    """The step's credential, as (an input under `with:`, the step's `env:`): the agent's own input
    of the Action when its adapter declares one, else its key variable in the step's env (the
    Action passes its environment to the bot)."""
    if inputs is None:
        variable = adapters.get(agent).operator_variables()[0]
        return "", f"        env:\n          {variable}: ${{{{ secrets.{variable} }}}}\n"
    name, secret = inputs.subscription if subscription and inputs.subscription else inputs.key
    return f"          {name}: ${{{{ secrets.{secret} }}}}\n", ""


def _events(triggers: Triggers) -> str:
    events = {name: set(types) for name, types in COMMENT_EVENTS.items()}
    for name in triggers.names:
        for event, types in TRIGGER_EVENTS[name].items():
            events.setdefault(event, set()).update(types)
    return "\n".join(f"  {event}: {{types: [{', '.join(sorted(types, key=TYPE_ORDER.index))}]}}"
                     for event, types in events.items())


def _trigger_if(handle: str, triggers: Triggers) -> str:
    """A mention in any body the subscribed events carry, or one of the triggers, never from a bot."""
    not_draft = "" if triggers.drafts else " && !github.event.pull_request.draft"
    alternatives = [f"|| {TRIGGER_IF[name].format(not_draft=not_draft)}" for name in triggers.names]
    return "\n".join([
        "    # a runner starts for a mention or a trigger .github/bot.yml turns on, never for a bot",
        "    if: >-",
        "      github.event.sender.type != 'Bot' && (",
        "        contains(github.event.comment.body || github.event.review.body || github.event.issue.body",
        f"                 || github.event.pull_request.body, '@{handle}')",
        *(f"        {line}" for line in alternatives)]) + ")"


def this_checkout() -> str:
    """`owner/repo@<commit sha>` of the checkout this bot runs from, from its origin remote."""
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(config.PROJECT_ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""
    match = _REMOTE.search(git("remote", "get-url", "origin"))
    sha = git("rev-parse", "--verify", "HEAD")
    if not match or not re.fullmatch(r"[0-9a-f]{40}", sha):
        raise WorkflowError("this checkout has no GitHub `origin` remote: name the action with "
                            "--uses OWNER/REPO@REF (the repository that holds this action.yml)")
    return f"{match.group('repo')}@{sha}"


EXAMPLE_USES = "OWNER/REPO@v1"
EXAMPLE_USES_NOTE = ("# `{command}` writes this file with the real\n"
                     "# `uses:` line (this Action's repository, pinned to a commit); {uses} stands for it here.\n"
                     "# Written by scripts/action-examples from the same generator; do not edit by hand.\n")
EXAMPLES = {
    "agent-bot.yml": ("# Example: answer `@bot …` on issues, pull requests and reviews of this repository.\n"
                      "# Add the ANTHROPIC_API_KEY repository secret.\n",
                      "bot action workflow", "bot", False),
    "agent-bot-claude-subscription.yml": (
        "# Example: Claude Code on a Claude subscription (the token from `claude setup-token`, stored as\n"
        "# the CLAUDE_CODE_OAUTH_TOKEN repository secret), with a custom handle (`@claude-bot …`).\n",
        "bot action workflow --handle claude-bot --claude-subscription",
        "claude-bot", True),
}


def examples() -> dict[str, str]:
    """file name -> the example workflow's text: a header, then exactly what the command writes."""
    return {name: header + EXAMPLE_USES_NOTE.format(uses=EXAMPLE_USES, command=command)
            + render(EXAMPLE_USES, handle, subscription=subscription)
            for name, (header, command, handle, subscription) in EXAMPLES.items()}
