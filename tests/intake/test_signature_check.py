"""The intake's HMAC check (bot/web/intake.py): a value is accepted exactly when it is `sha256=`
and the hex HMAC-SHA256 of the body under the secret, as GitHub signs it; any other, a value
outside ASCII too, is refused."""
from __future__ import annotations

import hashlib
import hmac

import pytest
from gidgethub import ValidationFailure
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient

from bot.service import store
from bot.web.app import create_app
from bot.web.intake import verify_signature
from tests.entry_settings import current
from tests.spine.helpers import configure_app, payload, signed

secrets = st.text(min_size=1, max_size=100)  # GitHub's secret field, and one longer than a block
bodies = st.binary(max_size=3000)


def _github(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@given(secrets, bodies)
def test_githubs_signature_of_the_body_is_accepted(secret, body):
    verify_signature(secret, body, _github(secret, body))


@given(secrets, bodies, st.text(max_size=80))
def test_any_other_value_is_refused(secret, body, value):
    if value == _github(secret, body):
        return
    with pytest.raises(ValidationFailure):
        verify_signature(secret, body, value)


@pytest.fixture
def client(monkeypatch):
    configure_app(monkeypatch)
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as test_client:
        yield test_client


def test_a_signature_header_with_a_byte_outside_ascii_is_401(client):
    """Header values are read as latin-1: a non-ASCII value is a wrong signature, not a crash."""
    body, headers = signed(payload("issue_comment.created", "@bot codex explain this"), "issue_comment")
    headers["x-hub-signature-256"] = ("sha256=" + "é" * 64).encode("latin-1")
    reply = client.post("/webhook", content=body, headers=headers)
    assert reply.status_code == 401 and store.jobs(store.connect(settings=current())) == []
