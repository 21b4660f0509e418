"""`bot replay FILE`: a delivery saved from the App's "Recent deliveries" page, posted to a running
`bot serve`, signed with the webhook secret of the environment."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.github import FakeGitHub
from tests.spine.helpers import SECRET, payload
from tests.spine.service import REPO, ROOT, Service, make_remote, seeded_github, service_env

SAVED_HEADERS = """Request URL: https://bot.example.com/webhook
Request method: POST
Accept: */*
Content-Type: application/json
User-Agent: GitHub-Hookshot/2a7e7d4
X-GitHub-Delivery: {delivery}
X-GitHub-Event: issue_comment
X-GitHub-Hook-ID: 476130651
X-GitHub-Hook-Installation-Target-ID: 4242
X-GitHub-Hook-Installation-Target-Type: integration
X-Hub-Signature: sha1=0000000000000000000000000000000000000000
X-Hub-Signature-256: sha256=0000000000000000000000000000000000000000000000000000000000000000
"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FakeGitHub, Service]]:
    tmp = tmp_path_factory.mktemp("replay")
    gh = seeded_github()
    service = Service(service_env(tmp, gh, make_remote(tmp), "http://127.0.0.1:9"), tmp / "serve.log").start()
    try:
        yield gh, service
    finally:
        service.stop()
        gh.stop()


def help_comment(gh: FakeGitHub, comment_id: int) -> str:
    """`@bot help` on issue 1 as GitHub's page shows the payload: indented JSON."""
    gh.add_comment(REPO, 1, "@bot help", user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", "@bot help")
    data["comment"]["id"] = comment_id
    return json.dumps(data, indent=2)


def replay(service: Service, file: Path, *options: str, secret: str = SECRET) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "BOT_"))}
    env.update(GITHUB_WEBHOOK_SECRET=secret, PYTHONPATH=str(ROOT), BOT_DATA_DIR=str(file.parent / "cli-data"))
    return subprocess.run([sys.executable, "-m", "bot.cli", "replay", str(file), "--url", service.url, *options],
                          env=env, capture_output=True, text=True, timeout=60)


def stored_delivery_id(service: Service, comment_id: int) -> str:
    db = sqlite3.connect(f"file:{service.env['BOT_DATA_DIR']}/bot.db?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT delivery_id, spec FROM jobs").fetchall()
    finally:
        db.close()
    return next(delivery for delivery, spec in rows
                if json.loads(spec)["trigger_key"] == f"issue_comment.created:comment:{comment_id}")


def test_a_saved_delivery_with_its_headers_is_answered_by_the_running_service(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved = tmp_path / "delivery.txt"
    saved.write_text(SAVED_HEADERS.format(delivery=uuid.uuid4()) + "\n" + help_comment(gh, 7101))
    done = replay(service, saved)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "202" in done.stdout and '"queued":true' in done.stdout
    gh.wait_for(lambda: any("help" in (c["body"] or "").lower() and c["user"]["type"] == "Bot"
                            for c in gh.comments(REPO, 1)), timeout=30)


def test_a_plain_json_payload_is_posted_as_the_event_named_by_the_option(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved = tmp_path / "payload.json"
    saved.write_text(help_comment(gh, 7102))
    done = replay(service, saved, "--event", "issue_comment")
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"queued":true' in done.stdout


def test_a_plain_json_payload_without_its_event_is_refused_before_sending(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved = tmp_path / "payload.json"
    saved.write_text(help_comment(gh, 7103))
    done = replay(service, saved)
    assert done.returncode == 2
    assert "--event" in done.stderr


def test_a_replay_gets_a_fresh_delivery_id(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved_id = str(uuid.uuid4())
    saved = tmp_path / "delivery.txt"
    saved.write_text(SAVED_HEADERS.format(delivery=saved_id) + "\n" + help_comment(gh, 7104))
    assert replay(service, saved).returncode == 0
    sent = stored_delivery_id(service, 7104)
    assert sent != saved_id and str(uuid.UUID(sent)) == sent


def test_same_id_keeps_the_saved_delivery_id(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved_id = str(uuid.uuid4())
    saved = tmp_path / "delivery.txt"
    saved.write_text(SAVED_HEADERS.format(delivery=saved_id) + "\n" + help_comment(gh, 7105))
    assert replay(service, saved, "--same-id").returncode == 0
    assert stored_delivery_id(service, 7105) == saved_id


def test_a_replay_signed_with_another_secret_is_refused_by_the_service(served: tuple[FakeGitHub, Service], tmp_path: Path) -> None:
    gh, service = served
    saved = tmp_path / "delivery.txt"
    saved.write_text(SAVED_HEADERS.format(delivery=uuid.uuid4()) + "\n" + help_comment(gh, 7106))
    done = replay(service, saved, secret="not the service's secret")
    assert done.returncode == 1
    assert "401" in done.stdout + done.stderr
