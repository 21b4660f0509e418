"""What the command line checks before anything runs, and where its data lives.

Every check returns or raises one line that says what is wrong and how to fix it: a person at a
terminal reads a sentence, not a traceback.
"""
from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from adapters import base as adapters
from adapters.base import Operator
from bot import config
from bot.config import Settings
from bot.workspace.git import git_env

APP_NAME = "github-agent-bot"
NOISY_LOGGERS = ("httpx", "mcp", "uvicorn.error")


def user_data_dir() -> Path:
    """The per-user data folder of the platform (XDG): $XDG_DATA_HOME/github-agent-bot, else
    ~/.local/share/github-agent-bot."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / APP_NAME


def use_user_data_dir() -> Path:
    """For `bot run` and `bot runs`: BOT_DATA_DIR when set, else the per-user folder, so a run
    inside a repository never writes its database or the CLI's transcripts into the working tree,
    and `bot runs` finds the runs from wherever it is started. Nothing is created here."""
    if not Settings(dict(os.environ)).is_set("BOT_DATA_DIR"):
        os.environ["BOT_DATA_DIR"] = str(user_data_dir())
    return Settings(dict(os.environ)).path("BOT_DATA_DIR").resolve()


def check_settings(settings: Settings) -> None:
    """The settings every run depends on, each refused with one line (config.MissingConfig)."""
    text = settings.text("BOT_SANDBOX_TIER")
    if text not in ("0", "1"):
        raise config.MissingConfig(f"BOT_SANDBOX_TIER={text!r} is not a sandbox tier: set it to 1 "
                                   "(bubblewrap, the default) or 0 (process jail, for tests)")
    default = settings.default_agent
    if default not in adapters.names():
        raise config.MissingConfig(f"BOT_DEFAULT_AGENT={default!r} is not an agent: set it to one of "
                                   f"{', '.join(adapters.names())}")


def missing_binary(agent: str, operator: Operator) -> str | None:
    """One line when the agent's CLI is not there to run, else None."""
    binary = adapters.get(agent, operator).binary
    found = shutil.which(binary) if os.sep not in binary else (binary if os.access(binary, os.X_OK) else None)
    if found:
        return None
    return (f"the {agent} CLI is not installed ({binary} not found): run `make agents` in the bot's "
            f"folder, or set BOT_{agent.upper()}_BIN to the CLI's path")


def quiet_logging(settings: Settings) -> None:
    """Warnings only on a terminal unless BOT_LOG_LEVEL asks for more: the progress lines are the log."""
    asked = settings.is_set("BOT_LOG_LEVEL")
    logging.basicConfig(level=settings.word("BOT_LOG_LEVEL") if asked else "WARNING",
                        format="%(levelname)s %(name)s: %(message)s")
    if not asked:
        for noisy in NOISY_LOGGERS:
            logging.getLogger(noisy).setLevel(logging.WARNING)


def plain_git_env() -> dict[str, str]:
    """git without anyone's config or programs (bot.workspace.git), for finding the repository."""
    return git_env()
