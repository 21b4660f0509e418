"""End to end: `bot serve` with BOT_PUBLIC_URL and GitHub sign-in, a signed delivery, the real Codex
CLI: the tracking comment links the run's page while it runs, the answer's provenance keeps the
link, and the service answers that link. Without sign-in nothing links a page no one could open."""
from __future__ import annotations

import re

import httpx
import pytest

from tests.fakes.provider import FakeProvider
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, scenario, seeded_github, service_env

pytestmark = pytest.mark.e2e
PUBLIC = "https://bot.example.com"
LINK = re.compile(re.escape(PUBLIC) + r"/runs/([0-9a-f]{32})")
SIGN_IN = {"GITHUB_CLIENT_ID": "Iv1.client", "GITHUB_CLIENT_SECRET": "client-secret"}


def _answered(service: Service, gh) -> list[str]:
    """Deliver a mention, wait for the answer: every text the bot wrote in the thread, in order."""
    gh.add_comment(REPO, 1, "@bot codex explain this repository", user="Codertocat", comment_id=1)
    data = payload("issue_comment.created", "@bot codex explain this repository")
    data["comment"]["id"] = 1
    assert service.deliver(data).status_code == 202
    gh.wait_for(lambda: any("<!-- bot:run" in (c["body"] or "") for c in gh.comments(REPO, 1)), timeout=120)
    edits = [c.body["body"] for c in gh.calls_to("PATCH", r"/issues/comments/\d+$")]
    return edits + [c["body"] for c in gh.comments(REPO, 1) if "<!-- bot:run" in (c["body"] or "")]


@scenario
def test_the_tracking_comment_and_the_answer_link_the_run_page(tmp_path):
    gh = seeded_github()
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, BOT_PUBLIC_URL=PUBLIC, **SIGN_IN)
        service = Service(env, tmp_path / "serve.log").start()
        try:
            edits = _answered(service, gh)
            live = [LINK.search(body) for body in edits if "follow it live" in body]
            assert live and live[0] is not None
            run_id = live[0].group(1)
            answer = next(c["body"] for c in gh.comments(REPO, 1) if "<!-- bot:run" in (c["body"] or ""))
            assert f"[run {run_id[:8]}…]({PUBLIC}/runs/{run_id})" in answer
            page = httpx.get(f"{service.url}/runs/{run_id}", headers=service.headers, follow_redirects=False)
            assert page.status_code == 302 and page.headers["location"] == f"/settings/runs/{run_id}"
        finally:
            service.stop()
            gh.stop()


def test_without_sign_in_no_comment_links_the_run_page(tmp_path):
    """BOT_PUBLIC_URL set, GitHub sign-in not configured: the run page could only answer 401."""
    gh = seeded_github()
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, BOT_PUBLIC_URL=PUBLIC)
        service = Service(env, tmp_path / "serve.log").start()
        try:
            written = _answered(service, gh)
            assert written and not [text for text in written if "follow it live" in text or "/runs/" in text]
        finally:
            service.stop()
            gh.stop()
