"""What `bot serve` says at start without a GitHub App: where to open to create it, once, in one
line with the served address; not the App's variables one by one as if they were the way."""
from __future__ import annotations

import pytest

from tests.settings.served import CODE_LINE, Served, first_run_env

pytestmark = pytest.mark.e2e


@pytest.fixture
def first_start(tmp_path):
    service = Served(first_run_env(tmp_path, "http://127.0.0.1:9"), tmp_path / "serve.log")
    try:
        assert service.outcome() == "serving", service.log()
        yield service
    finally:
        service.stop()


def test_without_an_app_the_start_log_says_once_where_to_create_it(first_start):
    warnings = [line for line in first_start.log().splitlines() if " WARNING " in line]
    assert len(warnings) == 1, warnings
    found = CODE_LINE.search(warnings[0])
    assert found and found.group(1) == first_start.url
    assert "or set GITHUB_APP_ID, GITHUB_PRIVATE_KEY_PATH and GITHUB_WEBHOOK_SECRET" in warnings[0]
