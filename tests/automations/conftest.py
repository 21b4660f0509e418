"""The store tests' backends (SQLite and PostgreSQL) for the automations' exactly-once tests."""
from __future__ import annotations

import pytest

from tests.review.world import open_world
from tests.store.conftest import backend, pg_url  # noqa: F401


@pytest.fixture
def world(tmp_path):
    """`bot serve` with codex and claude against fake providers, and the fake GitHub (tests/review/world.py)."""
    with open_world(tmp_path) as opened:
        yield opened
