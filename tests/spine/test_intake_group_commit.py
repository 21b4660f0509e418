"""Group commit: the deliveries of one event-loop iteration share one durable transaction."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from bot.service import store
from bot.web.app import create_app
from tests.entry_settings import current
from tests.spine.helpers import configure_app, payload, signed


def _insert(conversation: str, result=1):
    def statements(conn):
        conn.execute("INSERT INTO notices (conversation, kind, created_at) VALUES (?, 'test', 0)", [conversation])
        if isinstance(result, Exception):
            raise result
        return result
    return statements


def _commits(db) -> list[str]:
    seen: list[str] = []
    db.conn.set_trace_callback(lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return seen


def _notices() -> list[str]:
    return [row["conversation"] for row in store.connect(settings=current()).query("SELECT conversation FROM notices ORDER BY 1")]


async def test_writes_of_one_loop_iteration_share_one_commit():
    """Concurrent store.commit calls are written by a single COMMIT and each gets its own result."""
    db = store.connect(settings=current())
    commits = _commits(db)
    results = await asyncio.gather(*(store.commit(db, _insert(f"t#{n}", result=n)) for n in range(5)))
    assert results == [0, 1, 2, 3, 4] and len(commits) == 1 and len(_notices()) == 5


async def test_commit_returns_only_once_the_rows_are_durable():
    """When store.commit returns, the transaction is closed and another connection sees the row."""
    db = store.connect(settings=current())
    await store.commit(db, _insert("t#1"))
    assert not db.conn.in_transaction and _notices() == ["t#1"]


async def test_a_failing_write_is_rolled_back_alone_and_raised_to_its_caller():
    """An exception in one write of a batch undoes that write only; the others are committed."""
    db = store.connect(settings=current())
    outcomes = await asyncio.gather(store.commit(db, _insert("t#1")), store.commit(db, _insert("t#2", ValueError("x"))),
                                    store.commit(db, _insert("t#3")), return_exceptions=True)
    assert outcomes[0] == outcomes[2] == 1 and isinstance(outcomes[1], ValueError)
    assert _notices() == ["t#1", "t#3"]


async def test_a_none_result_rolls_back_that_write_only():
    """A write answering None (nothing may be stored) is undone inside the batch, as with store.write."""
    db = store.connect(settings=current())
    outcomes = await asyncio.gather(store.commit(db, _insert("t#1", None)), store.commit(db, _insert("t#2")))
    assert outcomes == [None, 1] and _notices() == ["t#2"]


def _statements(db) -> list[str]:
    seen: list[str] = []
    db.conn.set_trace_callback(lambda sql: seen.append(sql.split()[0].upper()))
    return seen


async def test_a_write_alone_in_its_iteration_runs_without_a_savepoint():
    """A batch of one is its own transaction: BEGIN, its statements, COMMIT, and nothing else."""
    db = store.connect(settings=current())
    statements = _statements(db)
    assert await store.commit(db, _insert("t#1")) == 1
    assert statements == ["BEGIN", "INSERT", "COMMIT"] and _notices() == ["t#1"]


async def test_a_failing_write_alone_is_rolled_back_and_raised_to_its_caller():
    db = store.connect(settings=current())
    with pytest.raises(ValueError, match="x"):
        await store.commit(db, _insert("t#1", ValueError("x")))
    assert not db.conn.in_transaction and _notices() == []


async def test_a_none_result_alone_stores_nothing():
    db = store.connect(settings=current())
    assert await store.commit(db, _insert("t#1", None)) is None
    assert not db.conn.in_transaction and _notices() == []


@pytest.fixture
async def app(monkeypatch):
    configure_app(monkeypatch)
    application = create_app(start_workers=False)
    async with application.router.lifespan_context(application):
        yield application


def _post(client: httpx.AsyncClient, data: dict, delivery: str | None = None):
    body, headers = signed(data, "issue_comment", delivery)
    return client.post("/webhook", content=body, headers=headers)


async def test_concurrent_deliveries_are_acknowledged_after_one_shared_commit(app):
    """Eight deliveries arriving together are stored by one COMMIT, each answered 202 with its own job."""
    commits = _commits(app.state.db)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
        replies = await asyncio.gather(*(_post(client, payload("issue_comment.created", f"@bot codex task {n}", id=100 + n))
                                         for n in range(8)))
    jobs = store.jobs(store.connect(settings=current()))
    assert [r.status_code for r in replies] == [202] * 8 and len(commits) == 1
    assert sorted(r.json()["job"] for r in replies) == [j["id"] for j in jobs]


async def test_duplicate_delivery_within_one_batch_creates_one_job(app):
    """Two copies of one delivery in the same batch store one job; the second is answered as a duplicate."""
    data = payload("issue_comment.created", "@bot codex explain")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
        replies = await asyncio.gather(_post(client, data, "d-same"), _post(client, data, "d-same"))
    assert sorted(r.status_code for r in replies) == [200, 202] and len(store.jobs(store.connect(settings=current()))) == 1


async def test_the_job_row_records_the_delivery_event_and_action(app):
    """The accepted delivery's record is its job: delivery id, kind, and event and action in the spec."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
        await _post(client, payload("issue_comment.created", "@bot codex explain"), "d-rec")
    job = store.jobs(store.connect(settings=current()))[0]
    spec = json.loads(job["spec"])
    assert (job["delivery_id"], job["kind"], spec["event"], spec["action"]) == ("d-rec", "episode", "issue_comment", "created")


async def test_outsiders_in_one_batch_get_one_notice_for_their_thread(app):
    """Two non-writers' commands on one thread, committed together, store a single notice reply."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://localhost") as client:
        replies = await asyncio.gather(*(_post(client, payload("issue_comment.created", "@bot codex do it",
                                                               author_association="NONE")) for _ in range(2)))
    jobs = store.jobs(store.connect(settings=current()))
    assert sorted(r.status_code for r in replies) == [200, 202]
    assert [(j["kind"], json.loads(j["spec"])["reply"]) for j in jobs] == [("reply", "not_allowed")]
