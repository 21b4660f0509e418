"""Helpers for the spine tests: signed deliveries built from recorded payloads, an App key."""
from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from functools import lru_cache
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github"
SECRET = "It's a Secret to Everybody"


def payload(name: str, body: str | None = None, **comment_fields) -> dict:
    """A recorded payload (tests/fixtures/github/<name>.json), deep-copied, comment body replaced."""
    data = copy.deepcopy(json.loads((FIXTURES / f"{name}.json").read_text()))
    item = data.get("comment") or data.get("review") or data.get("issue") or data.get("pull_request")
    if item is not None and body is not None:
        item["body"] = body
    if item is not None:
        item.update(comment_fields)
    return data


def signed(data: dict | bytes, event: str, delivery: str | None = None, secret: str = SECRET) -> tuple[bytes, dict]:
    body = data if isinstance(data, bytes) else json.dumps(data).encode()
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {"content-type": "application/json", "x-github-event": event,
               "x-github-delivery": delivery or str(uuid.uuid4()), "x-hub-signature-256": signature,
               "user-agent": "GitHub-Hookshot/test"}
    return body, headers


@lru_cache(maxsize=1)
def app_key() -> tuple[str, str]:
    """(private PEM, public PEM) of a throwaway GitHub App key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def configure_app(monkeypatch, api_url: str | None = None) -> None:
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("GITHUB_APP_ID", "4242")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", app_key()[0])
    if api_url:
        monkeypatch.setenv("GITHUB_API_URL", api_url)


def enqueue(db, kind: str, conversation: str, spec: dict | None = None) -> int:
    """A job as the intake stores one: the delivery's row (store.enqueue_delivery)."""
    import uuid

    from bot.service import store
    return store.write(db, lambda conn: store.enqueue_delivery(
        conn, delivery_id=uuid.uuid4().hex, event="issue_comment", action="created", kind=kind,
        conversation=conversation, spec=spec or minimal_spec(conversation)))


def minimal_spec(conversation: str) -> dict:
    """The fields every job spec has (bot/intake/spec.py), for a job whose content the test ignores."""
    repo, _, number = conversation.partition("#")
    return {"repo": repo, "number": int(number or 1), "author": "someone", "command": {"kind": "run"}}
