"""`bot doctor` as a person runs it from any folder: it reads the database `bot run` or the
service would use and creates nothing, shows what it is checking while it probes, and each row
says ok, warning or missing."""
from __future__ import annotations

import sqlite3

import pytest

from adapters import base as adapters
from bot.db import migrations
from tests.fakes.provider import say

pytestmark = pytest.mark.e2e
PROGRESS = [*(f"bot doctor: checking the {name} CLI…" for name in sorted(adapters.names())),
            "bot doctor: checking the sandbox…", "bot doctor: checking the GitHub App…",
            "bot doctor: checking the database…", "bot doctor: checking the wire APIs…"]


def doctor(bot, cwd, **env: str):
    done = bot("doctor", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(bot.tmp / "xdg"), **env}, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def row(done, check: str) -> list[str]:
    """A row of the report as [status, detail]."""
    rows = (line[len(check):].split(None, 1) for line in done.stdout.splitlines() if line.startswith(check + " "))
    return next(cells for cells in rows if cells[0] != "status")  # not the section's heading


def user_db(bot) -> str:
    return str(bot.tmp / "xdg" / "github-agent-bot" / "bot.db")


@pytest.fixture
def empty(bot):
    folder = bot.tmp / "elsewhere"
    folder.mkdir()
    return folder


def test_doctor_started_in_an_empty_folder_creates_nothing_there(bot, empty):
    doctor(bot, empty)
    assert list(empty.iterdir()) == []


def test_without_a_database_yet_the_row_says_missing_and_where_bot_run_makes_it(bot, empty):
    assert row(doctor(bot, empty), "database") == [
        "missing", f"none yet at {user_db(bot)} (bot run's per-user data dir): the first `bot run` creates it"]


def test_doctor_reads_the_database_bot_run_wrote(bot, empty):
    bot.provider.script(say("recorded"))
    assert bot.run("hi", env={"BOT_DATA_DIR": "", "XDG_DATA_HOME": str(bot.tmp / "xdg")}).returncode == 0
    done = doctor(bot, empty)
    assert row(done, "database") == ["ok", f"SQLite {user_db(bot)} (bot run's per-user data dir)"]
    assert row(done, "schema version") == ["ok", str(migrations.LATEST)]


def test_in_the_services_folder_doctor_reads_the_services_database(bot):
    service = bot.tmp / "svc"
    (service / ".bot-data").mkdir(parents=True)
    sqlite3.connect(service / ".bot-data" / "bot.db").close()
    assert row(doctor(bot, service), "database") == [
        "ok", f"SQLite {service / '.bot-data' / 'bot.db'} (the service's, in this folder)"]


def test_a_database_behind_the_schema_is_a_warning(bot):
    service = bot.tmp / "svc"
    (service / ".bot-data").mkdir(parents=True)
    sqlite3.connect(service / ".bot-data" / "bot.db").close()
    assert row(doctor(bot, service), "schema version") == [
        "warning", f"0, not {migrations.LATEST} yet: `bot serve` or `bot migrate` applies the rest"]


def test_no_connected_worker_is_missing(bot):
    bot.provider.script(say("recorded"))
    assert bot.run("hi").returncode == 0
    done = bot("doctor")
    assert row(done, "connected workers") == ["missing", "none: no `bot serve` is running on this database"]


def test_doctor_says_what_it_checks_while_it_probes(bot, empty):
    lines = doctor(bot, empty).stderr.splitlines()
    assert [line for line in lines if line.startswith("bot doctor: checking")] == PROGRESS
