"""`bot doctor` sees a `bot serve` that runs no workers (a first run waiting for its GitHub App, or
an intake with BOT_WORKERS=0): the service heartbeats its own row, and the doctor says it is
running without workers instead of "no `bot serve` is running"."""
from __future__ import annotations

from starlette.testclient import TestClient

from bot.cli.doctor_database import database_section
from bot.web.app import create_app
from tests.entry_settings import current


def _connected(settings) -> dict:
    return next(row for row in database_section(settings)["rows"] if row["check"] == "connected workers")


def test_a_first_run_service_is_seen_running_without_workers():
    settings = current()  # no GitHub App: the first run's setup page, no worker pool
    with TestClient(create_app(settings=settings)):
        row = _connected(settings)
    assert row["state"] == "warning", row
    assert "`bot serve`" in row["detail"] and "no worker" in row["detail"], row


def test_an_intake_only_service_is_seen_running_without_workers(monkeypatch):
    monkeypatch.setenv("BOT_WORKERS", "0")
    settings = current()
    with TestClient(create_app(settings=settings)):
        row = _connected(settings)
    assert row["state"] == "warning" and "no worker" in row["detail"], row


def test_once_the_service_stops_the_doctor_sees_none():
    settings = current()
    with TestClient(create_app(settings=settings)):
        pass
    assert _connected(settings)["state"] == "missing"
