"""bot.github against the fake GitHub: token cache, permission cache, rate-limit retries."""
from __future__ import annotations

import gidgethub
import httpx
import pytest

from bot.github import client as github
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.workspace.repo_config import RepoConfig
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.spine.helpers import app_key, configure_app

REPO = "octo/repo"


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub(app_id="4242", public_key=app_key()[1]) as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1)
        configure_app(monkeypatch, api_url=fake.url)
        github._permissions.clear()
        yield fake


async def thread(tokens: github.TokenCache, client: httpx.AsyncClient) -> github.Thread:
    return await github.installation_thread(client, tokens, 7, REPO, 1)


async def test_installation_token_is_minted_once_and_reused(gh):
    """Two threads of one installation share one minted token (JWT verified by the fake)."""
    tokens = github.TokenCache.of(current())
    async with httpx.AsyncClient() as client:
        await thread(tokens, client)
        await thread(tokens, client)
    assert len(gh.calls_to("POST", r"/app/installations/7/access_tokens$")) == 1


async def test_permission_is_cached(gh):
    """The collaborator permission is asked once and then served from the cache."""
    gh.set_permission(REPO, "alice", "maintain")
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        assert await t.permission("alice") == "maintain" and await t.permission("alice") == "maintain"
    assert len(gh.calls_to("GET", r"/collaborators/alice/permission$")) == 1


async def test_unknown_user_has_no_permission(gh):
    """A 404 from the permission endpoint means no access, not an error."""
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        assert await t.permission("stranger") == "none"


async def test_read_permission_cannot_trigger(gh):
    """`read` (every user of a public repository) is never enough."""
    gh.set_permission(REPO, "reader", "read")
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        assert not RepoConfig().may_trigger(await t.permission("reader"))


async def test_secondary_limit_with_retry_after_is_retried(gh):
    """A 403 secondary limit with Retry-After is waited out and the comment is posted."""
    gh.fail_next("POST", r"/issues/1/comments$", 403, headers={"retry-after": "1"},
                 body={"message": "You have exceeded a secondary rate limit."})
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        await t.create_comment("hello")
    assert [c["body"] for c in gh.comments(REPO, 1)] == ["hello"]


async def test_server_error_is_retried(gh):
    """A 502 from GitHub is retried with backoff instead of losing the post."""
    gh.fail_next("POST", r"/issues/1/comments$", 502)
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        await t.create_comment("after a hiccup")
    assert len(gh.comments(REPO, 1)) == 1


async def test_plain_404_is_not_retried(gh):
    """A client error that is not a rate limit surfaces at once."""
    async with httpx.AsyncClient() as client:
        t = github.Thread((await thread(github.TokenCache.of(current()), client)).api, REPO, 99)
        with pytest.raises(gidgethub.HTTPException) as refused:
            await t.create_comment("nowhere")
    assert refused.value.status_code == 404
    assert len(gh.calls_to("POST", r"/issues/99/comments$")) == 1


async def test_review_reply_goes_to_the_review_thread(gh):
    """A tracking comment for a review comment is a reply in its thread."""
    gh.add_pull(REPO, 2)
    parent = gh.add_review_comment(REPO, 2, "@bot fix")
    async with httpx.AsyncClient() as client:
        t = github.Thread((await thread(github.TokenCache.of(current()), client)).api, REPO, 2)
        await t.create_comment("on it", review_thread=parent["id"])
    assert [c["in_reply_to_id"] for c in gh.comments(REPO, 2) if c["body"] == "on it"] == [parent["id"]]


MARK = "<!-- bot:job 9 -->"


async def test_comment_stored_before_a_502_is_not_posted_twice(gh):
    """GitHub stores the comment and then answers 502: the retry finds it instead of posting again."""
    gh.fail_next("POST", r"/issues/1/comments$", 502, after=True)
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        comment_id = await t.create_comment(f"working\n{MARK}", marker=MARK)
    assert [c["id"] for c in gh.comments(REPO, 1)] == [comment_id]


async def test_comment_whose_answer_was_lost_on_the_network_is_not_posted_twice(gh):
    """The connection drops after GitHub stored the comment: still exactly one comment."""
    gh.fail_next("POST", r"/issues/1/comments$", 0, after=True)
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        comment_id = await t.create_comment(f"working\n{MARK}", marker=MARK)
    assert [c["id"] for c in gh.comments(REPO, 1)] == [comment_id]


async def test_network_error_before_the_comment_was_stored_is_retried(gh):
    """A connection dropped before GitHub stored anything: the comment is posted on the retry."""
    gh.fail_next("POST", r"/issues/1/comments$", 0)
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        await t.create_comment(f"working\n{MARK}", marker=MARK)
    assert [c["body"] for c in gh.comments(REPO, 1)] == [f"working\n{MARK}"]


async def test_retried_job_reuses_the_comment_an_earlier_attempt_posted(gh):
    """look_first: a comment carrying the marker already exists, so nothing is posted."""
    earlier = gh.add_comment(REPO, 1, f"working\n{MARK}", user="bot[bot]", user_type="Bot")
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        assert await t.create_comment(f"working again\n{MARK}", marker=MARK, look_first=True) == earlier["id"]
    assert gh.calls_to("POST", r"/issues/1/comments$") == []


async def test_marker_pasted_by_a_person_is_not_taken_for_the_bots_comment(gh):
    """Someone copies the job marker into their own comment: the bot still posts its own."""
    gh.add_comment(REPO, 1, f"gotcha\n{MARK}", user="mallory", user_type="User")
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        await t.create_comment(f"working\n{MARK}", marker=MARK, look_first=True)
    assert len(gh.calls_to("POST", r"/issues/1/comments$")) == 1


async def test_expired_installation_token_is_renewed_for_the_answer(gh):
    """The token expires during a long job: the final edit gets a 401, a new token, and goes out."""
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        comment_id = await t.create_comment("working")
        gh.expire_tokens()
        await t.update_comment(comment_id, "the answer")
    assert [c["body"] for c in gh.comments(REPO, 1)] == ["the answer"]
    assert len(gh.calls_to("POST", r"/app/installations/7/access_tokens$")) == 2


async def test_token_close_to_expiry_is_renewed_before_the_push(monkeypatch):
    """Before the effects, the job's git token is renewed when it nears expiry, and the job's
    secrets mask the first one and the new one."""
    from bot.job import pipeline
    from bot.job.modes import GitHubMode
    from bot.job.run import JobRun
    from bot.service import store
    with FakeGitHub(app_id="4242", public_key=app_key()[1], token_ttl_s=600) as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1)
        configure_app(monkeypatch, api_url=fake.url)
        async with httpx.AsyncClient() as client:
            t = await thread(github.TokenCache.of(current()), client)
            ctx = pipeline.Job(spec=JobSpec(repo=REPO, number=1, author="alice", command=Command(kind="run", request="fix")),
                               conversation=f"{REPO}#1",
                               surface=None, mode=GitHubMode(t), settings=current())
            job_run = JobRun.begin(store.connect(settings=current()), ctx)
            first = ctx.token
            await ctx.refresh_token()
            await t.issue()  # the thread's own calls use the new token
    assert ctx.token != first and ctx.token in fake.tokens
    assert first not in job_run.secrets.mask(f"{first}") and ctx.token not in job_run.secrets.mask(f"{ctx.token}")
    assert fake.calls[-1].headers["authorization"].endswith(ctx.token)


async def test_answer_outlasts_a_github_outage_longer_than_the_edit_retries(gh, monkeypatch):
    """Five failed edits in a row (more than one edit's retries): the answer still goes out."""
    from bot.job import pipeline
    from bot.job.tracking import GitHubSurface, TrackingComment
    async with httpx.AsyncClient() as client:
        t = await thread(github.TokenCache.of(current()), client)
        tracking = TrackingComment(GitHubSurface(t), lambda: [])
        await tracking.start("working")
        gh.fail_next("PATCH", r"/issues/comments/\d+$", 0, times=5)
        await pipeline.deliver_final(tracking, "the answer")
    assert [c["body"] for c in gh.comments(REPO, 1)] == ["the answer"]
