"""The worker pool in-process against the fake GitHub: replies, the permission gate, ordering."""
from __future__ import annotations

import asyncio
import os
import sqlite3

import pytest

from bot.config import Settings
from bot.service import queue, store
from bot.service.worker import WorkerPool
from tests.entry_settings import current
from tests.spine.helpers import configure_app, enqueue
from tests.spine.service import REPO, make_remote, seeded_github


@pytest.fixture
def gh(monkeypatch, tmp_path):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{make_remote(tmp_path)}")
    from bot.github import client as github
    github._permissions.clear()
    yield fake
    fake.stop()


def spec(reply: str | None = None, request: str = "explain", author: str = "Codertocat", **command) -> dict:
    body = {"repo": REPO, "number": 1, "installation_id": 1, "author": author, "author_id": 1,
            "association": "MEMBER", "is_pr": False, "title": "t",
            "target": {"type": "issue_comment", "id": 77},
            "command": {"kind": "run", "agent": "codex", "new_session": False, "request": request,
                        "unknown_name": None, **command}}
    if reply:
        body["reply"] = reply
    return body


async def drain(db, jobs: int, timeout: float = 60) -> list[dict]:
    pool = WorkerPool(db, Settings.load(os.environ), size=2)
    await pool.start()
    try:
        for _ in range(int(timeout / 0.05)):
            rows = store.jobs(db)
            if len([r for r in rows if r["status"] in ("done", "failed", "cancelled")]) >= jobs:
                return rows
            await asyncio.sleep(0.05)
        raise AssertionError(f"jobs did not finish: {store.jobs(db)}")
    finally:
        await pool.stop(grace_s=5)


async def test_help_reply_lists_the_agents(gh):
    """A help job posts the usage with every agent name."""
    db = store.connect(settings=current())
    enqueue(db, "reply", f"{REPO}#1", spec("help"))
    await drain(db, 1)
    body = gh.comments(REPO, 1)[-1]["body"]
    assert all(agent in body for agent in ("claude", "codex", "opencode", "gemini"))


async def test_unknown_agent_reply_names_it(gh):
    """`@bot copilot …` is answered with the name and the agent list."""
    db = store.connect(settings=current())
    enqueue(db, "reply", f"{REPO}#1", spec("unknown_agent", unknown_name="copilot"))
    await drain(db, 1)
    assert "`copilot`" in gh.comments(REPO, 1)[-1]["body"]


async def test_not_allowed_notice_says_who_can_use_the_bot(gh):
    """The once-per-thread notice explains the write-permission rule."""
    db = store.connect(settings=current())
    enqueue(db, "reply", f"{REPO}#1", spec("not_allowed"))
    await drain(db, 1)
    assert "write" in gh.comments(REPO, 1)[-1]["body"]


async def test_stop_with_nothing_running_says_so(gh):
    """`@bot stop` in an idle thread gets 👍 and a short reply."""
    db = store.connect(settings=current())
    gh.add_comment(REPO, 1, "@bot stop", comment_id=77)
    enqueue(db, "reply", f"{REPO}#1", spec("stop"))
    await drain(db, 1)
    assert "Nothing is running" in gh.comments(REPO, 1)[-1]["body"]
    assert {"subject": "issue_comment", "comment_id": 77, "content": "+1"} in gh.reactions


async def test_member_without_write_permission_is_refused_by_the_worker(gh):
    """An org member who passed the pre-filter but only has read access gets a refusal, no run."""
    db = store.connect(settings=current())
    gh.add_comment(REPO, 1, "@bot codex explain", user="reader", comment_id=77)
    gh.set_permission(REPO, "reader", "read")
    enqueue(db, "episode", f"{REPO}#1", spec(author="reader"))
    rows = await drain(db, 1)
    answer = [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"][-1]["body"]
    assert "only people with" in answer and rows[0]["status"] == "failed"
    assert db.query("SELECT COUNT(*) AS n FROM runs") == [{"n": 0}]


async def test_status_reports_sessions_and_jobs(gh):
    """`@bot status` lists the thread's sessions."""
    from bot.job import conversations
    db = store.connect(settings=current())
    conversations.record_turn(db, f"{REPO}#1", "codex", "sess-123456789", fresh=True)
    enqueue(db, "reply", f"{REPO}#1", spec("status"))
    await drain(db, 1)
    body = gh.comments(REPO, 1)[-1]["body"]
    assert "codex" in body and "sess-1234567" in body and "1 turn" in body


async def test_reply_posted_before_a_crash_is_not_posted_again(gh):
    """A reply job reclaimed after a crash, whose comment already exists, posts nothing more."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "reply", f"{REPO}#1", spec("help"))
    store.update_job(db, job_id, tracking_comment_id=4242)
    await drain(db, 1)
    assert gh.calls_to("POST", r"/issues/1/comments$") == []


async def test_claim_loop_survives_a_database_error(gh, monkeypatch):
    """A failing claim (a locked database) is logged and retried; jobs still run."""
    real_claim, failures = queue.claim, []

    def flaky_claim(*args, **kwargs):
        if not failures:
            failures.append(1)
            raise sqlite3.OperationalError("database is locked")
        return real_claim(*args, **kwargs)

    monkeypatch.setattr(queue, "claim", flaky_claim)
    db = store.connect(settings=current())
    enqueue(db, "reply", f"{REPO}#1", spec("help"))
    rows = await drain(db, 1)
    assert failures and rows[0]["status"] == "done"


async def test_reply_posted_before_its_id_was_stored_is_not_posted_again(gh):
    """A crash between posting a reply and storing its id: the retry finds the comment by its marker."""
    from bot.service.worker import job_marker
    db = store.connect(settings=current())
    job_id = enqueue(db, "reply", f"{REPO}#1", spec("help"))
    store.update_job(db, job_id, attempts=1)  # the first attempt died after its POST
    gh.add_comment(REPO, 1, f"help text\n{job_marker(job_id)}", user="bot[bot]", user_type="Bot")
    rows = await drain(db, 1)
    assert gh.calls_to("POST", r"/issues/1/comments$") == [] and rows[0]["tracking_comment_id"]


async def test_job_is_run_again_when_github_was_unreachable_at_its_start(gh, monkeypatch):
    """The token request dies on the network: the job is not failed but runs again and answers."""
    monkeypatch.setenv("BOT_LEASE_SECONDS", "1")
    gh.fail_next("POST", r"/app/installations/1/access_tokens$", 0)
    db = store.connect(settings=current())
    enqueue(db, "reply", f"{REPO}#1", spec("help"))
    rows = await drain(db, 1)
    assert (rows[0]["status"], rows[0]["attempts"]) == ("done", 2)
    assert len(gh.calls_to("POST", r"/issues/1/comments$")) == 1


async def test_worker_that_lost_its_lease_stops_without_writing_to_the_thread(gh):
    """Another worker took the job over: this one stops its run and its comment is left alone."""
    import httpx

    from bot.github.client import installation_thread
    from bot.job.tracking import TrackingComment
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", f"{REPO}#1", spec())
    pool = WorkerPool(db, Settings.load(os.environ), size=1)
    job = queue.claim(db, pool.owner)
    async with httpx.AsyncClient() as client:
        ctx = pool._context(job, await installation_thread(client, pool.tokens, 1, REPO, 1))
        tracking = TrackingComment(ctx.surface, lambda: [])
        await tracking.start("working")
        store.update_job(db, job_id, lease_owner="another-worker")
        run = asyncio.create_task(asyncio.Event().wait())  # the job's run, as the pool tracks it
        pool.running[job_id] = run
        pool._beat(job, asyncio.Event(), ticks=10**6)
        await tracking.finish("⏹️ Stopped")
        await asyncio.wait({run}, timeout=10)  # a bound only: the cancellation is immediate
        stopped = run.done()
        run.cancel()
    assert stopped and gh.calls_to("PATCH", r"/issues/comments/\d+$") == []


async def test_permission_check_refused_by_github_says_what_to_do(gh):
    """A 403 from the permission endpoint ends the job with a reply naming the App permission to grant."""
    db = store.connect(settings=current())
    gh.add_comment(REPO, 1, "@bot codex explain", comment_id=77)
    gh.fail_next("GET", r"/collaborators/Codertocat/permission$", 403,
                 body={"message": "Resource not accessible by integration"})
    enqueue(db, "episode", f"{REPO}#1", spec())
    rows = await drain(db, 1)
    answer = [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"][-1]["body"]
    assert "could not check @Codertocat's permission" in answer and "Metadata: read" in answer
    assert rows[0]["status"] == "failed"


def push_config(tmp_path, text: str) -> None:
    """Commit `.github/bot.yml` on main of the test remote."""
    import subprocess
    work = tmp_path / "config-work"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(work)]
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remotes" / f"{REPO}.git"), str(work)], check=True)
    (work / ".github").mkdir()
    (work / ".github" / "bot.yml").write_text(text)
    subprocess.run(git + ["add", "."], check=True)
    subprocess.run(git + ["commit", "-qm", "bot config"], check=True)
    subprocess.run(git + ["push", "-q", "origin", "HEAD:main"], check=True)


def bot_answer(gh) -> str:
    return [c for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"][-1]["body"]


async def test_invalid_repository_config_is_explained_and_nothing_runs(gh, tmp_path):
    """A broken `.github/bot.yml` ends the job with the key at fault and how to fix it."""
    push_config(tmp_path, "allowed_agents: [codex, copilot]\n")
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec())
    rows = await drain(db, 1)
    assert "configuration is invalid" in bot_answer(gh) and "allowed_agents" in bot_answer(gh)
    assert rows[0]["status"] == "failed"


async def test_agent_the_repository_does_not_allow_is_refused_with_the_allowed_list(gh, tmp_path):
    """`@bot codex` where bot.yml allows only claude: the reply names the allowed agents."""
    push_config(tmp_path, "allowed_agents: [claude]\n")
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec())
    await drain(db, 1)
    assert "does not allow `codex`" in bot_answer(gh) and "`claude`" in bot_answer(gh)


async def test_no_credentials_anywhere_names_where_to_set_a_key(gh):
    """No key for the agent at any level: the reply says which key and where to put it."""
    db = store.connect(settings=current())
    enqueue(db, "episode", f"{REPO}#1", spec())
    rows = await drain(db, 1)
    assert "no credentials to run codex" in bot_answer(gh) and "OPENAI_API_KEY" in bot_answer(gh)
    assert rows[0]["status"] == "failed"


async def test_episode_stopped_while_queued_ends_stopped_without_running(gh):
    """A queued turn flagged by `@bot stop` ends as stopped when claimed; no agent runs."""
    db = store.connect(settings=current())
    job_id = enqueue(db, "episode", f"{REPO}#1", spec(request="never run"))
    store.update_job(db, job_id, cancel_requested=1)
    rows = await drain(db, 1)
    assert rows[0]["status"] == "cancelled"
    assert "Stopped before it started" in gh.comments(REPO, 1)[-1]["body"]
    assert db.query("SELECT COUNT(*) AS n FROM runs") == [{"n": 0}]  # no episode was recorded


async def test_status_shows_the_threads_and_the_requesters_spend_from_the_relay_ledger(gh):
    """`@bot status` sums the relay's ledger: this thread's spend over all its turns, and the asker's
    spend today (UTC) over every thread; others' spend elsewhere is not counted."""
    from bot.relay.budgets import Ledger, Scope
    db = store.connect(settings=current())
    ledger = Ledger(db)
    ledger.add("r1", Scope(f"{REPO}#1", "1", "1"), 1200, 0.25)
    ledger.add("r2", Scope(f"{REPO}#1", "99", "1"), 300, 0.05)  # another requester in this thread
    ledger.add("r3", Scope(f"{REPO}#2", "1", "1"), 4000, 1.5)  # the asker in another thread
    ledger.add("r4", Scope(f"{REPO}#3", "99", "1"), 7777, 9.0)  # someone else elsewhere
    enqueue(db, "reply", f"{REPO}#1", spec("status"))
    await drain(db, 1)
    body = gh.comments(REPO, 1)[-1]["body"]
    assert "model spend, this thread: 1,500 tokens, $0.3000" in body
    assert "model spend, @Codertocat today (UTC): 5,200 tokens, $1.7500" in body


def test_status_text_says_when_spend_includes_unpriced_calls():
    from bot.job import replies
    from bot.relay.budgets import Spend
    text = replies.status("o/r#1", [], [], spend={"thread": Spend(10, 0.0, 2)})
    assert "model spend, this thread: 10 tokens, $0.0000 (2 unpriced calls)" in text
