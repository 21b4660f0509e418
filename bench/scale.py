"""Scale-out figures, against a throwaway PostgreSQL cluster (tests/store/postgres.py):

1. episodes per minute with 1, 2 and 4 worker processes on one PostgreSQL, each process claiming
   through bot.service.queue (FOR UPDATE SKIP LOCKED), woken by LISTEN/NOTIFY (bot.service.wakeup),
   holding each episode for a fixed think time (the provider's, standing in for the whole turn) and
   finishing it: the figure measures coordination, not CPU (aim: 4 workers >= 3.6x one);
2. claim latency p50/p99 with 10,000 episodes queued over 2,500 threads (each claimed job is then
   finished, untimed, so the next claim sees a realistic table);
3. pack + seal + store, and fetch + open + unpack, of a CLI home of a typical size (a Codex
   session of about 3 MB of JSON lines in three rollout files).

`python -m bench.scale` prints the same lines; `python -m bench.scale worker URL` is one worker.
"""
from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.size import pick, seconds, smoke

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.stats import p50_p99_ms  # noqa: E402
from tests.entry_settings import current  # noqa: E402
from tests.store.postgres import Cluster, bin_dir  # noqa: E402

THINK_S = seconds(0.5, 0.05)
EPISODES = pick(48, 4)
QUEUED = pick(10_000, 200)
CLAIMS = pick(400, 20)
KEY = base64.b64encode(b"b" * 32).decode()


def worker(url: str) -> None:
    """One worker process with one slot: wait for a wake-up, claim, think, finish, repeat."""
    from bot import db as bot_db
    from bot.service import queue, wakeup

    db = bot_db.connect(url, settings=current())

    class Pool:
        owner, running, size = f"bench:{os.getpid()}", {}, 1

        def __init__(self):
            self.db, self.woken = db, asyncio.Event()

        def wake(self) -> None:
            self.woken.set()

    async def loop() -> None:
        pool = Pool()
        wakeup.Wakeup(pool).start()
        while True:
            pool.woken.clear()
            job = queue.claim(db, pool.owner)
            if job is None:
                try:
                    await asyncio.wait_for(pool.woken.wait(), wakeup.SHARED_POLL_S)
                except TimeoutError:
                    pass
                continue
            await asyncio.sleep(THINK_S)
            queue.finish(db, job.id, "done", owner=pool.owner)

    asyncio.run(loop())


def _throughput(cluster: Cluster, processes: int) -> float:
    from bot import db as bot_db
    from bot.service import store

    url = cluster.new_database()
    db = bot_db.connect(url, settings=current())
    env = dict(os.environ, BOT_SECRET_KEY=KEY, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-m", "bench.scale", "worker", url], cwd=ROOT, env=env)
             for _ in range(processes)]
    try:
        while len(db.query("SELECT owner FROM workers")) < processes:
            time.sleep(0.05)
        time.sleep(0.5)  # every worker is listening
        started = time.perf_counter()
        store.write(db, lambda conn: [store.enqueue_delivery(
            conn, delivery_id=f"d{n}", event="issue_comment", action="created", kind="episode",
            conversation=f"o/r#{n}", spec=_spec(n)) for n in range(EPISODES)])
        while db.query("SELECT COUNT(*) AS n FROM jobs WHERE status = 'done'")[0]["n"] < EPISODES:
            time.sleep(0.01)
        return EPISODES / (time.perf_counter() - started) * 60
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _spec(number: int) -> dict:
    """The fields a job spec must have (bot/intake/spec.py): a claim fails a row without them."""
    return {"repo": "o/r", "number": number, "author": "bench", "command": {"kind": "run", "request": "x"}}


def _claim_latency(cluster: Cluster) -> tuple[float, float]:
    from bot import db as bot_db
    from bot.service import queue

    db = bot_db.connect(cluster.new_database(), settings=current())
    now = time.time()
    with db.transaction():
        db.executemany("INSERT INTO jobs (delivery_id, kind, conversation, spec, created_at) VALUES (?, ?, ?, ?, ?)",
                       [[f"d{n}", "episode", f"o/r#{n % 2500}", json.dumps(_spec(n % 2500)), now]
                        for n in range(QUEUED)])
    db.execute("ANALYZE jobs")
    timings = []
    for _ in range(CLAIMS):
        started = time.perf_counter()
        job = queue.claim(db, "bench")
        timings.append(time.perf_counter() - started)
        queue.finish(db, job.id, "done", owner="bench")
    return p50_p99_ms(timings)


def _pack_restore(cluster: Cluster) -> tuple[float, float, int, int]:
    from bot.episode import session_home
    from bot.service import store

    os.environ["BOT_DATABASE_URL"] = cluster.new_database()
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["BOT_DATA_DIR"] = str(Path(scratch) / "a")
        home = session_home.home_dir(Path(scratch) / "a", "o/r#1", "codex")
        line = ('{"timestamp":"2026-11-30T10:00:00Z","type":"response_item","payload":{"type":"message",'
                '"role":"assistant","content":[{"type":"output_text","text":"%s"}]}}\n')
        for n in range(3):
            rollout = home / f".codex/sessions/2026/11/3{n}/rollout-2026-11-3{n}T10-00-00-{n}.jsonl"
            rollout.parent.mkdir(parents=True)
            with open(rollout, "w") as out:
                for i in range(pick(4_000, 100)):
                    out.write(line % f"turn {i} of session {n}: " + os.urandom(60).hex()[: 40 + i % 80])
        raw = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
        db = store.connect(settings=current())
        started = time.perf_counter()
        session_home.save(db, current(), "o/r#1", "codex")
        packed_ms = (time.perf_counter() - started) * 1000
        stored = db.query("SELECT size FROM session_homes")[0]["size"]
        os.environ["BOT_DATA_DIR"] = str(Path(scratch) / "b")
        started = time.perf_counter()
        assert session_home.restore(db, current(), "o/r#1", "codex")
        restored_ms = (time.perf_counter() - started) * 1000
    return packed_ms, restored_ms, raw, stored


def run() -> list[str]:
    bindir = bin_dir()
    if bindir is None:
        return ["PostgreSQL is not installed (make test installs Debian's postgresql): skipped"]
    os.environ["BOT_SECRET_KEY"] = KEY
    cluster = Cluster(bindir)
    cluster.start()
    try:
        lines = []
        rates = {n: _throughput(cluster, n) for n in ((1, 2) if smoke() else (1, 2, 4))}
        for n, rate in rates.items():
            lines.append(f"episodes/min, {n} worker process(es), think {THINK_S} s: {rate:7.1f} "
                         f"({rate / rates[1]:.2f}x one worker)")
        p50, p99 = _claim_latency(cluster)
        lines.append(f"claim latency with {QUEUED} queued (2,500 threads): p50 {p50:.2f} ms, p99 {p99:.2f} ms")
        packed, restored, raw, stored = _pack_restore(cluster)
        lines.append(f"CLI home {raw / 1e6:.1f} MB ({stored / 1e6:.2f} MB sealed): pack+store {packed:.0f} ms, "
                     f"restore {restored:.0f} ms")
        return lines
    finally:
        cluster.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"]:
        worker(sys.argv[2])
    else:
        print("\n".join(run()))
