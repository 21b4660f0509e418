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



def _comment(comment_id: int) -> dict:
    data = payload("issue_comment.created", "@bot codex explain this")
    data["comment"]["id"] = comment_id
    return data


def test_settings_put_in_place_while_serving_are_the_ones_a_delivery_is_checked_against(client):
    """The intake reads the secret once per settings object: new settings (the settings pages put
    a new object in place) are read anew, and the old secret is refused from then on."""
    from bot.config import Settings
    assert client.post("/webhook", content=(sent := signed(_comment(1), "issue_comment"))[0],
                       headers=sent[1]).status_code == 202
    client.app.state.settings = Settings({**client.app.state.settings.environ, "GITHUB_WEBHOOK_SECRET": "a-new-secret"})
    old_body, old_headers = signed(_comment(2), "issue_comment")
    new_body, new_headers = signed(_comment(3), "issue_comment", secret="a-new-secret")
    assert client.post("/webhook", content=old_body, headers=old_headers).status_code == 401
    assert client.post("/webhook", content=new_body, headers=new_headers).status_code == 202


def test_the_secret_read_once_is_not_in_the_intakes_repr(client):
    from bot.web.intake import IntakeSettings
    assert SECRET not in repr(IntakeSettings.of(client.app.state))
