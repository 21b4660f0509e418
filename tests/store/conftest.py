"""Store tests run against both backends: SQLite in the test's data dir, and a database of a
throwaway PostgreSQL cluster (tests/store/postgres.py) started once per session."""
from __future__ import annotations

import base64

import pytest

TEST_KEY = base64.b64encode(b"k" * 32).decode()


@pytest.fixture
def pg_url(pg_cluster, monkeypatch) -> str:
    """A fresh PostgreSQL database, made the bot's (BOT_DATABASE_URL) with the shared key set."""
    url = pg_cluster.new_database()
    monkeypatch.setenv("BOT_DATABASE_URL", url)
    monkeypatch.setenv("BOT_SECRET_KEY", TEST_KEY)
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request) -> str:
    """Every test that asks for it (or imports the autouse `both_backends`) runs on each backend."""
    if request.param == "postgresql":
        request.getfixturevalue("pg_url")
    return request.param
