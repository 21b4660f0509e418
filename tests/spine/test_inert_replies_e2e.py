"""Through the real `bot serve` and the fake GitHub: an outsider's hostile word comes back inert and
only once, and a command GitHub would not show as live starts nothing."""
from __future__ import annotations

import re

import pytest

from tests.fakes.provider import FakeProvider
from tests.markdown_view import code_spans, live
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
HOSTILE = "copilot-`@org/team`[see](https://evil.example)`"  # looks like an agent name: answered
OWN_MARKER = re.compile(r"<!-- bot:job \d+ -->")  # the bot's own, appended to every comment of a job


@pytest.fixture
def world(tmp_path):
    gh = seeded_github()
    with FakeProvider() as provider:
        service = Service(service_env(tmp_path, gh, make_remote(tmp_path), provider.url), tmp_path / "serve.log")
        service.start()
        try:
            yield gh, service
        finally:
            service.stop()
            gh.stop()


def comment(gh, body: str, comment_id: int, association: str) -> dict:
    gh.add_comment(REPO, 1, body, user="stranger", association=association, comment_id=comment_id)
    data = payload("issue_comment.created", body, author_association=association)
    data["comment"]["id"] = comment_id
    return data


def bot_comments(gh) -> list[dict]:
    return [c for c in gh.comments(REPO, 1) if c["user"]["type"] == "Bot"]


def test_an_outsiders_hostile_agent_word_comes_back_inert_and_only_once(world):
    gh, service = world
    first = service.deliver(comment(gh, f"@bot {HOSTILE} fix it", 501, "NONE"))
    second = service.deliver(comment(gh, f"@bot {HOSTILE} fix it again", 502, "NONE"))
    assert (first.status_code, second.status_code) == (202, 200)
    [reply] = gh.wait_for(lambda: bot_comments(gh), timeout=60)
    text = OWN_MARKER.sub("", reply["body"])
    assert live(text) == [] and code_spans(text)[0] == HOSTILE


def test_a_command_inside_an_html_comment_starts_nothing(world):
    gh, service = world
    reply = service.deliver(comment(gh, "<!--\n@bot codex fix this\n-->", 503, "OWNER"))
    assert reply.status_code == 202 and reply.json()["queued"] is False
