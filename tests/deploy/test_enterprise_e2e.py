"""End to end on GitHub Enterprise Server: `bot serve` with GITHUB_API_URL=http://HOST/api/v3 and
GITHUB_SERVER_URL=http://HOST answers a mention with the real Codex CLI, every REST call under
/api/v3 of that host and the thread's attachment fetched from the web host."""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.enterprise import EnterpriseGitHub, seeded_enterprise
from tests.fakes.provider import FakeProvider, say
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, service_env

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")


@pytest.fixture
def enterprise(tmp_path: Path) -> Iterator[tuple[EnterpriseGitHub, FakeProvider, Service]]:
    gh = seeded_enterprise()
    remotes = make_remote(tmp_path)
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, remotes, provider.url, GITHUB_API_URL=gh.api_url, GITHUB_SERVER_URL=gh.url)
        service = Service(env, tmp_path / "serve.log").start()
        try:
            yield gh, provider, service
        finally:
            service.stop()
            gh.stop()


def answers(gh: EnterpriseGitHub) -> list[dict]:
    return [c for c in gh.comments(REPO, 1) if MARKER.search(c["body"] or "")]


def test_a_mention_is_answered_through_the_enterprise_servers_api(enterprise: tuple) -> None:
    gh, provider, service = enterprise
    provider.script(say("The repository greets the world."))
    attached = gh.add_attachment(b"attached log\n", content_type="text/plain", name="trace.log")
    gh.add_comment(REPO, 1, f"CI log: [trace.log]({attached})", user="Codertocat")
    gh.add_comment(REPO, 1, "@bot codex what does this repository do?", user="Codertocat", comment_id=1)
    data = payload("issue_comment.created", "@bot codex what does this repository do?")
    data["comment"]["id"] = 1
    assert service.deliver(data).status_code == 202
    gh.wait_for(lambda: answers(gh) and "greets the world" in answers(gh)[0]["body"], timeout=120)
    assert {"subject": "issue_comment", "comment_id": 1, "content": "eyes"} in gh.reactions
    assert gh.calls_to("POST", r"^/app/installations/\d+/access_tokens$")
    assert gh.calls_to("GET", r"^/user-attachments/files/")  # fetched from the web host, with a token
    assert gh.misses == []
