"""Pools on many machines: a job queued anywhere wakes them (PostgreSQL LISTEN/NOTIFY), and each
heartbeats a workers row while it runs."""
from __future__ import annotations

import asyncio

from bot.service import store, wakeup
from tests.entry_settings import current
from tests.spine.helpers import enqueue


class Pool:
    """What Wakeup reads of a WorkerPool (the real one would claim and run the job)."""

    def __init__(self, db):
        self.db, self.owner, self.running, self.size = db, "host-a:1:abc", {}, 2
        self.woken = asyncio.Event()

    def wake(self) -> None:
        self.woken.set()


async def test_a_job_queued_by_another_process_wakes_the_pool(pg_url):
    pool = Pool(store.connect(settings=current()))
    listener = wakeup.Wakeup(pool)
    listener.start()
    try:
        await asyncio.wait_for(pool.woken.wait(), 30)  # listening now
        pool.woken.clear()
        enqueue(store.connect(settings=current()), "episode", "o/r#1")
        await asyncio.wait_for(pool.woken.wait(), 30)
    finally:
        await listener.stop()


async def test_a_running_pool_is_listed_as_connected_until_it_stops(backend):
    pool = Pool(store.connect(settings=current()))
    listener = wakeup.Wakeup(pool)
    listener.start()
    await asyncio.sleep(0.1)
    seen = [row["owner"] for row in wakeup.connected_workers(store.connect(settings=current()))]
    await listener.stop()
    assert seen == ["host-a:1:abc"] and wakeup.connected_workers(store.connect(settings=current())) == []


def test_shared_database_polls_slowly_local_one_quickly(backend):
    expected = wakeup.SHARED_POLL_S if backend == "postgresql" else wakeup.LOCAL_POLL_S
    assert wakeup.poll_seconds(store.connect(settings=current())) == expected
