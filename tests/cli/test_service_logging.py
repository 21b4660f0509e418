"""`bot serve` and `bot worker` set up logging one way: BOT_LOG_FORMAT, job ids, secrets masked."""
from __future__ import annotations

import json
import logging
import os

import pytest

from bot.cli import service_logging
from bot.config import Settings
from bot.record.redact import masked_in_logs


@pytest.fixture
def root_logging():
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in saved:
        root.addHandler(handler)
    root.setLevel(level)


def test_json_lines_with_a_running_jobs_secret_masked(root_logging, monkeypatch, capsys):
    monkeypatch.setenv("BOT_LOG_FORMAT", "json")
    service_logging.start(Settings.load(os.environ))
    with masked_in_logs(["sk-live-secret-value-0123456789"]):
        logging.getLogger("bot.test").warning("calling with sk-live-secret-value-0123456789")
    line = json.loads(capsys.readouterr().err.strip().splitlines()[-1])
    assert line["logger"] == "bot.test" and "sk-live-secret-value-0123456789" not in line["message"]


def test_the_chatty_libraries_log_warnings_only(root_logging):
    service_logging.start(Settings.load(os.environ))
    assert all(logging.getLogger(name).level == logging.WARNING for name in service_logging.NOISY)
