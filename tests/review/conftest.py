"""The review world (tests/review/world.py) as a fixture."""
from __future__ import annotations

import pytest

from tests.review.world import open_world


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path) as opened:
        yield opened
