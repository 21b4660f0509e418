"""X-Hub-Signature-256 holds an HMAC-SHA256 and nothing else: a value naming another algorithm
(`sha1=`, which gidgethub's check would verify as SHA-1) is refused as unsigned."""
from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from starlette.testclient import TestClient

from bot.service import store
from bot.web.app import create_app
from tests.entry_settings import current
from tests.spine.helpers import SECRET, configure_app, payload, signed


@pytest.fixture
def client(monkeypatch):
    configure_app(monkeypatch)
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as test_client:
        yield test_client


def _post_with_signature(client, signature: str):
    body, headers = signed(_body(), "issue_comment")
    headers["x-hub-signature-256"] = signature
    return client.post("/webhook", content=body, headers=headers)


def _hmac(body: bytes, algorithm) -> str:
    return hmac.new(SECRET.encode(), body, algorithm).hexdigest()


def _body() -> bytes:
    return json.dumps(payload("issue_comment.created", "@bot codex explain this")).encode()


def test_sha1_value_in_the_sha256_header_is_refused(client):
    """A correct HMAC-SHA1 of the body, labelled `sha1=`, in X-Hub-Signature-256: 401, no job."""
    reply = _post_with_signature(client, "sha1=" + _hmac(_body(), hashlib.sha1))
    assert reply.status_code == 401 and store.jobs(store.connect(settings=current())) == []
