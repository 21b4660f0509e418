"""`bot action workflow`: the workflow file a repository adds to use the Action, ready to commit.

The `uses:` line names where this Action really lives: `--uses OWNER/REPO@REF`, else the
repository and commit of the checkout the command runs from (its `origin` remote, pinned to the
full commit SHA, as GitHub advises for third-party actions). The pre-filter `if:` starts a runner
only for a comment that mentions the handle and was not written by a bot; the `concurrency`
group queues the turns of one thread (never cancelling the running one).
"""
from __future__ import annotations

import re
import subprocess

from bot import config
from bot.errors import BotError

KEY_INPUTS = {"claude": ("anthropic-api-key", "ANTHROPIC_API_KEY"), "codex": ("openai-api-key", "OPENAI_API_KEY"),
              "opencode": ("openai-api-key", "OPENAI_API_KEY"), "gemini": ("gemini-api-key", "GEMINI_API_KEY")}
_REMOTE = re.compile(r"(?:github\.com[:/])(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
_HANDLE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,38}$")

TEMPLATE = """\
name: agent bot
on:
  issue_comment: {{types: [created]}}
  pull_request_review_comment: {{types: [created]}}
  issues: {{types: [opened]}}
permissions: {{}}
# the turns of one thread run one at a time, in order
concurrency:
  group: agent-bot-${{{{ github.event.issue.number || github.event.pull_request.number }}}}
  cancel-in-progress: false
jobs:
  answer:
    # a runner starts only for a comment that mentions the handle and was not written by a bot
    if: >-
      contains(github.event.comment.body || github.event.issue.body, '@{handle}')
      && github.event.sender.type != 'Bot'
    runs-on: ubuntu-24.04
    timeout-minutes: 30
    permissions: {{contents: write, issues: write, pull-requests: write, actions: write}}
    steps:
      - uses: {uses}
        with:
          handle: {handle}
          agent: {agent}
          {key_input}: ${{{{ secrets.{key_secret} }}}}
"""


class WorkflowError(BotError, ValueError):
    """The workflow cannot be written as asked; the message says what to pass."""


def render(uses: str, handle: str = "bot", agent: str = "claude") -> str:
    if not _HANDLE.match(handle):
        raise WorkflowError(f"{handle!r} is not a GitHub login")
    if agent not in KEY_INPUTS:
        raise WorkflowError(f"unknown agent {agent!r} (one of {', '.join(KEY_INPUTS)})")
    key_input, key_secret = KEY_INPUTS[agent]
    return TEMPLATE.format(uses=uses, handle=handle, agent=agent, key_input=key_input, key_secret=key_secret)


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
