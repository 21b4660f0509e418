"""Every command's first step: every configuration variable checked against its kind, once, before
the command's module is even imported, so a bad value costs nothing and reads as one line per
variable (bot/config/table.py:check_all) instead of a traceback later on."""
from __future__ import annotations

import os
import sys

from bot import config

EXIT_BAD_SETTING = 2
# The Action's inputs that arrive as these variables (action.yml): said in its error line.
ACTION_INPUTS = {"BOT_HANDLE": "handle", "BOT_DEFAULT_AGENT": "agent", "BOT_SANDBOX_TIER": "sandbox-tier"}


def refused(command: str) -> bool:
    """Print the bad variables' lines for `bot <command>` (the Action's as workflow errors)."""
    lines = config.check_all(os.environ)
    for line in lines:
        if command == "action":
            from gidgethub import actions as workflow  # noqa: PLC0415 - only the Action needs it
            workflow.command("error", line + _input_named(line))
        else:
            print(f"bot {command}: {line}", file=sys.stderr)
    return bool(lines)


def _input_named(line: str) -> str:
    name = line.split("=", 1)[0]
    return f" (in the workflow: the action's `{ACTION_INPUTS[name]}` input)" if name in ACTION_INPUTS else ""
