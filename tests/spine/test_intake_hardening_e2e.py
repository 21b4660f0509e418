"""POST /webhook through a real `bot serve`: what an unauthenticated or replaying sender can make
the intake do. A replayed body under a new delivery id stores nothing new, a slow body is cut off
(408), bodies beyond the concurrency cap are turned away (503 with Retry-After) before any
signature check, and a correctly signed but malformed payload is a 400 (never redelivered)."""
from __future__ import annotations

import socket

import httpx
import pytest

from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import payload
from tests.spine.service import Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e


@pytest.fixture
def start(tmp_path, monkeypatch):
    """start(**env) -> a running `bot serve` against the fake GitHub (no agent is run)."""
    gh = seeded_github()
    remotes = make_remote(tmp_path)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    services: list[Service] = []

    def started(**extra: str) -> Service:
        env = service_env(tmp_path, gh, remotes, "http://127.0.0.1:9", BOT_WORKERS="1", **extra)
        services.append(Service(env, tmp_path / "serve.log").start())
        return services[-1]

    try:
        yield started
    finally:
        for service in services:
            service.stop()
        gh.stop()


def jobs() -> list[dict]:
    return store.jobs(store.connect(settings=current()))


def open_body(service: Service, declared: int = 4096, sent: bytes = b'{"a') -> socket.socket:
    """A POST /webhook whose headers promise `declared` bytes of body, of which only `sent` come."""
    sock = socket.create_connection(("127.0.0.1", service.port), timeout=60)
    sock.sendall(b"POST /webhook HTTP/1.1\r\nHost: 127.0.0.1:" + str(service.port).encode() +
                 b"\r\nContent-Type: application/json\r\n"
                 b"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: slow-1\r\n"
                 b"Content-Length: " + str(declared).encode() + b"\r\n\r\n" + sent)
    return sock


def status_line(sock: socket.socket) -> bytes:
    return sock.recv(4096).split(b"\r\n", 1)[0]


def test_a_replayed_body_under_a_new_delivery_id_creates_no_job(start):
    """The same signed comment delivered again under another X-GitHub-Delivery: one job only."""
    service = start()
    data = payload("issue_comment.created", "@bot codex explain")
    first = service.deliver(data, delivery="delivery-1")
    replay = service.deliver(data, delivery="delivery-2")
    assert (first.status_code, replay.status_code) == (202, 200)
    assert len(jobs()) == 1


def test_a_replayed_review_under_a_new_delivery_id_creates_no_job(start):
    """A review body is deduplicated by its review id the same way."""
    service = start()
    data = payload("pull_request_review.submitted", "@bot codex look at this")
    service.deliver(data, event="pull_request_review", delivery="review-1")
    service.deliver(data, event="pull_request_review", delivery="review-2")
    assert len(jobs()) == 1


def test_a_new_comment_in_the_same_thread_still_creates_a_job(start):
    """Two comments (two ids) in one thread are two jobs: the key is the comment, not the thread."""
    service = start()
    for comment_id in (101, 102):
        data = payload("issue_comment.created", "@bot codex explain")
        data["comment"]["id"] = comment_id
        service.deliver(data)
    assert len(jobs()) == 2


def test_a_body_that_never_finishes_is_cut_off_with_408(start):
    """A slow-loris body (headers, then a trickle that never completes) is answered 408."""
    service = start(BOT_WEBHOOK_BODY_TIMEOUT="1")
    sock = open_body(service)
    try:
        assert status_line(sock) == b"HTTP/1.1 408 Request Timeout"
    finally:
        sock.close()
    assert jobs() == []


def test_bodies_over_the_concurrency_cap_get_503_with_retry_after(start):
    """With BOT_WEBHOOK_CONCURRENCY=1 and one body held open, the next request is turned away
    before its signature is checked: 503 with Retry-After (an unsigned probe otherwise gets 401)."""
    service = start(BOT_WEBHOOK_CONCURRENCY="1", BOT_WEBHOOK_BODY_TIMEOUT="60")
    held = open_body(service)
    try:
        probes: list[httpx.Response] = []

        def capped() -> bool:
            probes.append(httpx.post(f"{service.url}/webhook", content=b"{}", timeout=10,
                                     headers={"x-github-event": "ping", "x-github-delivery": "probe"}))
            return probes[-1].status_code == 503

        wait_until(capped)
        assert probes[-1].headers["retry-after"].isdigit()
    finally:
        held.close()
    # the held body gone, its slot is free again: an unsigned probe is checked (401)
    wait_until(lambda: httpx.post(f"{service.url}/webhook", content=b"{}", timeout=10).status_code == 401)


def test_a_signed_but_malformed_payload_is_400(start):
    """A comment event without its issue, correctly signed, is refused as malformed (400, so
    GitHub does not redeliver it), not as a storage failure (503)."""
    service = start()
    data = payload("issue_comment.created", "@bot codex explain")
    del data["issue"]
    reply = service.deliver(data)
    assert reply.status_code == 400 and jobs() == []


def test_a_signed_payload_with_a_wrong_type_is_400(start):
    """A comment id that is not a number (the worker could never react to it) is malformed too."""
    service = start()
    data = payload("issue_comment.created", "@bot codex explain")
    data["comment"]["id"] = {"not": "a number"}
    reply = service.deliver(data)
    assert reply.status_code == 400 and jobs() == []


def wait_until(predicate, attempts: int = 1000) -> None:
    """Ask until the predicate holds; each attempt is a real request, so this waits for a
    positive answer, never for time to pass."""
    for _ in range(attempts):
        if predicate():
            return
    raise AssertionError("the condition never held")

