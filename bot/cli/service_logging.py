"""Logging for the long-running processes (`bot serve`, `bot worker`): one setup for both."""
from __future__ import annotations

import logging

from bot import logs
from bot.config import Settings
from bot.record.redact import install_log_redaction

NOISY = ("httpx", "mcp", "uvicorn.error")


def start(settings: Settings) -> None:
    """Text or JSON lines (BOT_LOG_FORMAT) with the job's ids on each, every running job's secrets
    masked, and the chatty libraries at warnings only."""
    logs.configure(settings.word("BOT_LOG_LEVEL"), settings.word("BOT_LOG_FORMAT"))
    install_log_redaction()
    for noisy in NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)
