"""Every webhook payload the tests load or build is one GitHub could send: it validates against
GitHub's published webhook schemas for its event and action."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, SHARED
from tests.fakes.webhook_check import webhook_problems
from tests.spine import helpers

RECORDED = sorted((FIXTURES / "github").glob("*.json"))
SHARED_PAYLOADS = sorted((SHARED / "data" / "github" / "webhooks").glob("*/*.json"))


def _event_of_fixture(path: Path) -> str:
    return path.name.split(".", 1)[0]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_a_recorded_fixture_payload_validates_against_its_events_schema(path):
    assert webhook_problems(_event_of_fixture(path), json.loads(path.read_text())) == []


@pytest.mark.skipif(not SHARED_PAYLOADS, reason="the shared test data is not beside this checkout")
@pytest.mark.parametrize("path", SHARED_PAYLOADS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_shared_example_payload_validates_against_its_events_schema(path):
    assert webhook_problems(path.parent.name, json.loads(path.read_text())) == []


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_a_payload_the_spine_helpers_build_validates_against_its_events_schema(path):
    data = helpers.payload(path.stem, body="@bot codex fix this")
    assert webhook_problems(_event_of_fixture(path), data) == []


def test_the_webhook_check_flags_a_payload_missing_a_required_field():
    data = helpers.payload("issue_comment.created")
    del data["comment"]["user"]
    assert any("'user' is a required property" in p for p in webhook_problems("issue_comment", data))
