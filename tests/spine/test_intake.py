"""POST /webhook: every refusal answers the right status and stores no job."""
from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from bot.service import store
from bot.web.app import create_app
from tests.entry_settings import current
from tests.spine.helpers import configure_app, payload, signed


@pytest.fixture
def client(monkeypatch):
    configure_app(monkeypatch)
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as test_client:
        yield test_client


def post(client, data, event="issue_comment", **kw):
    body, headers = signed(data, event, **kw)
    return client.post("/webhook", content=body, headers=headers)


def jobs() -> list[dict]:
    return store.jobs(store.connect(settings=current()))


def test_command_from_an_owner_is_queued(client):
    """A signed `@bot codex ...` from the repo owner stores one episode job and answers 202."""
    reply = post(client, payload("issue_comment.created", "@bot codex explain this"))
    assert reply.status_code == 202 and [j["kind"] for j in jobs()] == ["episode"]


def test_bad_signature_is_401(client):
    """A body signed with another secret is refused."""
    reply = post(client, payload("issue_comment.created", "@bot hi"), secret="wrong")
    assert reply.status_code == 401 and jobs() == []


def test_missing_signature_is_401(client):
    """No X-Hub-Signature-256 header at all is refused."""
    body, headers = signed(payload("issue_comment.created", "@bot hi"), "issue_comment")
    del headers["x-hub-signature-256"]
    assert client.post("/webhook", content=body, headers=headers).status_code == 401 and jobs() == []


def test_malformed_json_is_400(client):
    """A correctly signed body that is not JSON is refused as malformed."""
    body, headers = signed(b"{not json", "issue_comment")
    assert client.post("/webhook", content=body, headers=headers).status_code == 400 and jobs() == []


def test_missing_event_header_is_400(client):
    """A signed delivery without X-GitHub-Event is refused as malformed."""
    body, headers = signed(payload("issue_comment.created", "@bot hi"), "issue_comment")
    del headers["x-github-event"]
    assert client.post("/webhook", content=body, headers=headers).status_code == 400 and jobs() == []


def test_oversized_body_is_413(client):
    """A declared body over 25 MB is refused before it is read."""
    body, headers = signed(b"{}", "issue_comment")
    headers["content-length"] = str(26 * 1024 * 1024)
    reply = client.post("/webhook", content=b"{}", headers=headers)
    assert reply.status_code == 413 and jobs() == []


def test_oversized_chunked_body_is_413(client):
    """A body without Content-Length is cut off once it passes 25 MB."""
    body, headers = signed(b"{}", "issue_comment")
    chunks = (b"x" * (1 << 20) for _ in range(26))
    reply = client.post("/webhook", content=chunks, headers=headers)
    assert reply.status_code == 413 and jobs() == []


def test_ping_is_200(client):
    """GitHub's ping is answered 200 and stores nothing."""
    assert post(client, payload("ping"), event="ping").status_code == 200 and jobs() == []


def test_unknown_event_is_202_and_stores_nothing(client):
    """An event we do not act on is acknowledged and dropped."""
    reply = post(client, {"action": "completed", "check_run": {}}, event="check_run")
    assert reply.status_code == 202 and jobs() == []


def test_edited_comment_never_starts_a_job(client):
    """Editing a comment to add a mention does not trigger."""
    reply = post(client, payload("issue_comment.edited", "@bot codex fix it"))
    assert reply.status_code == 202 and jobs() == []


def test_duplicate_delivery_creates_one_job(client):
    """A redelivery of a delivery whose job exists does not queue a second job."""
    data = payload("issue_comment.created", "@bot codex explain")
    first = post(client, data, delivery="d-1")
    second = post(client, data, delivery="d-1")
    assert (first.status_code, second.status_code, len(jobs())) == (202, 200, 1)


def test_a_replayed_comment_under_a_new_delivery_id_creates_one_job(client):
    """The same signed comment under another delivery id names the same comment: no second job."""
    data = payload("issue_comment.created", "@bot codex explain")
    first = post(client, data, delivery="d-a")
    replay = post(client, data, delivery="d-b")
    assert (first.status_code, replay.status_code, len(jobs())) == (202, 200, 1)


def test_failed_job_can_be_redelivered(client):
    """A redelivery of a delivery whose job failed queues it again."""
    data = payload("issue_comment.created", "@bot codex explain")
    post(client, data, delivery="d-2")
    store.update_job(store.connect(settings=current()), jobs()[0]["id"], status="failed")
    assert post(client, data, delivery="d-2").status_code == 202 and len(jobs()) == 2


def test_bot_author_is_ignored(client):
    """A comment from a bot account never triggers."""
    data = payload("issue_comment.created", "@bot codex go")
    data["comment"]["user"].update(login="dependabot[bot]", type="Bot")
    assert post(client, data).status_code == 202 and jobs() == []


def test_own_comment_is_ignored(client):
    """The bot's own comments (which quote the grammar) never trigger."""
    data = payload("issue_comment.created", "@bot help")
    data["comment"]["user"].update(login="bot[bot]", type="Bot")
    assert post(client, data).status_code == 202 and jobs() == []


def test_non_writer_gets_one_notice_per_thread_and_no_episode(client):
    """An outsider's command stores a single notice reply for the thread, never an episode."""
    replies = [post(client, payload("issue_comment.created", "@bot codex do it", author_association="NONE"))
               for _ in range(2)]
    assert [r.status_code for r in replies] == [202, 200]
    assert [(j["kind"], json.loads(j["spec"])["reply"]) for j in jobs()] == [("reply", "not_allowed")]


def test_quoted_mention_is_ignored(client):
    """A quoted command in a reply is not a command."""
    reply = post(client, payload("issue_comment.created", "> @bot codex fix\nagreed"))
    assert reply.status_code == 202 and jobs() == []


def test_unknown_agent_queues_a_reply(client):
    """`@bot copilot ...` queues a reply listing the agents, not an episode."""
    post(client, payload("issue_comment.created", "@bot copilot fix"))
    assert [(j["kind"], json.loads(j["spec"])["reply"]) for j in jobs()] == [("reply", "unknown_agent")]


def test_stop_is_queued_as_a_job_and_flags_nothing_at_the_intake(client):
    """`@bot stop` from a member is a `stop` job: the worker cancels only after GitHub's
    permission check, so the intake (which asks GitHub nothing) flags no episode."""
    db = store.connect(settings=current())
    post(client, payload("issue_comment.created", "@bot codex long task", id=11))
    store.update_job(db, jobs()[0]["id"], status="running")
    post(client, payload("issue_comment.created", "@bot stop", id=12))
    assert [(j["kind"], j["cancel_requested"]) for j in jobs()] == [("episode", 0), ("stop", 0)]


def test_an_outsiders_stop_gets_the_notice_and_no_stop_job(client):
    """A stop from someone the association pre-filter refuses is only the once-per-thread notice."""
    post(client, payload("issue_comment.created", "@bot stop", author_association="NONE"))
    assert [(j["kind"], json.loads(j["spec"])["reply"]) for j in jobs()] == [("reply", "not_allowed")]


def test_review_comment_replies_in_its_thread(client):
    """A review-comment trigger records the review thread to reply in."""
    post(client, payload("pull_request_review_comment.created", "@bot claude fix this"),
         event="pull_request_review_comment")
    spec = json.loads(jobs()[0]["spec"])
    assert spec["target"]["type"] == "review_comment" and spec["target"]["thread"] == spec["target"]["id"]


def test_unconfigured_service_answers_503(monkeypatch):
    """Without a GitHub App configured, /webhook says what is missing with 503."""
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as unconfigured:
        body, headers = signed(payload("issue_comment.created", "@bot hi"), "issue_comment")
        reply = unconfigured.post("/webhook", content=body, headers=headers)
        page = unconfigured.get("/")
    assert reply.status_code == 503 and "GITHUB_WEBHOOK_SECRET" in reply.json()["reason"]
    assert "GITHUB_APP_ID" in page.text


def test_issue_opened_with_a_command_is_queued(client):
    """A command in a new issue's body starts a job reacting on the issue itself."""
    data = payload("issues.opened", "Crash on start.\n\n@bot claude find the cause")
    data["installation"] = {"id": 1}
    post(client, data, event="issues")
    spec = json.loads(jobs()[0]["spec"])
    assert spec["target"] == {"type": "issue", "id": data["issue"]["number"]} and spec["command"]["agent"] == "claude"


def test_review_body_command_is_queued(client):
    """A submitted review whose body holds a command starts a job on the PR."""
    post(client, payload("pull_request_review.submitted", "Looks off.\n@bot codex tighten the checks"),
         event="pull_request_review")
    spec = json.loads(jobs()[0]["spec"])
    assert spec["is_pr"] and spec["command"]["request"] == "tighten the checks"


def test_delivery_without_installation_is_ignored(client):
    """A payload not addressed to an installed App (no installation id) stores nothing."""
    data = payload("issue_comment.created", "@bot codex hi")
    del data["installation"]
    assert post(client, data).status_code == 202 and jobs() == []


def test_form_encoded_delivery_is_accepted(client):
    """A webhook configured as application/x-www-form-urlencoded is parsed like JSON."""
    from urllib.parse import urlencode
    form = urlencode({"payload": json.dumps(payload("issue_comment.created", "@bot codex hi"))}).encode()
    body, headers = signed(form, "issue_comment")
    headers["content-type"] = "application/x-www-form-urlencoded"
    assert client.post("/webhook", content=body, headers=headers).status_code == 202 and len(jobs()) == 1


def test_other_content_type_is_400(client):
    """A signed body of another media type is refused as malformed."""
    body, headers = signed(b"<xml/>", "issue_comment")
    headers["content-type"] = "application/xml"
    assert client.post("/webhook", content=body, headers=headers).status_code == 400 and jobs() == []


def test_pull_request_opened_with_a_command_is_queued(client):
    """A command in a new pull request's description starts a job on that PR."""
    post(client, payload("pull_request.opened", "Refactor.\n\n@bot gemini review this"), event="pull_request")
    spec = json.loads(jobs()[0]["spec"])
    assert spec["is_pr"] and spec["command"]["agent"] == "gemini"


def test_pull_request_opened_without_a_body_queues_only_the_automatic_review_check(client):
    """A PR opened with a null description holds no command (and does not crash); the one job stored
    is the automatic review, which the worker runs only when bot.yml turns it on."""
    reply = post(client, payload("pull_request.opened.null-body"), event="pull_request")
    assert reply.status_code == 202
    assert [json.loads(job["spec"])["automatic"]["kind"] for job in jobs()] == ["pull_request_opened"]
