"""Intake figures, loopback only, bounded loops:

1. throughput and p50/p99 latency of POST /webhook (signature check, parse, dedupe, job insert)
   against a bare Starlette endpoint on the SAME uvicorn process, and the ratio (aim >= 0.70);
2. p50/p99 acknowledgement latency at an open-loop 200 requests/s (aim p99 < 20 ms);
3. delivery → 👀 latency at the fake GitHub with the workers running (aim p99 < 200 ms).

`python -m bench.intake` prints the same lines; `python -m bench.intake serve PORT` is the server.
"""
from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.spine.helpers import SECRET, app_key, payload, signed  # noqa: E402

CLOSED_LOOP_REQUESTS = pick(4000, 200)
ROUNDS = pick(8, 2)
CONCURRENCY = pick(16, 4)
PACED_RATE = pick(200, 50)
PACED_SECONDS = pick(5, 1)
EYES_DELIVERIES = pick(60, 5)


def serve(port: int) -> None:
    """The intake app plus a bare endpoint, on one uvicorn (no workers: the request path only)."""
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from bot.web.app import create_app

    async def bare(request: Request) -> Response:
        await request.body()
        return Response(status_code=202)

    app = create_app(start_workers=False)
    app.router.routes.append(Route("/bare", bare, methods=["POST"]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _env(data_dir: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ, BOT_DATA_DIR=data_dir, GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="4242",
               GITHUB_PRIVATE_KEY=app_key()[0], PYTHONPATH=str(ROOT), BOT_LOG_LEVEL="WARNING")
    env.update(extra)
    return env


def _start(argv: list[str], env: dict[str, str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not start")


_comment_ids = itertools.count(1_000_000)


def _delivery(number: int = 1) -> tuple[bytes, dict]:
    """A new comment each time: the intake deduplicates a replayed comment id like a delivery id."""
    data = payload("issue_comment.created", "@bot codex explain this")
    data["issue"]["number"] = number
    data["comment"]["id"] = next(_comment_ids)
    return signed(data, "issue_comment", str(uuid.uuid4()))


class _Connection:
    """A minimal keep-alive HTTP/1.1 client on asyncio streams: the load generator must cost far
    less than the server it measures (httpx costs about as much as the endpoint itself)."""

    def __init__(self, port: int):
        self.port = port

    async def open(self) -> _Connection:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        return self

    async def post(self, path: str, body: bytes, headers: dict) -> int:
        head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        self.writer.write(f"POST {path} HTTP/1.1\r\nhost: 127.0.0.1:{self.port}\r\ncontent-length: {len(body)}\r\n"
                          f"{head}\r\n".encode() + body)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return int(status_line.split()[1])

    def close(self) -> None:
        self.writer.close()


async def _closed_loop(port: int, path: str, total: int) -> tuple[float, list[float]]:
    bodies = iter([_delivery() for _ in range(total)])
    latencies: list[float] = []
    connections = [await _Connection(port).open() for _ in range(CONCURRENCY)]

    async def worker(connection: _Connection):
        for body, headers in bodies:
            started = time.perf_counter()
            status = await connection.post(path, body, headers)
            latencies.append(time.perf_counter() - started)
            assert status == 202, status

    started = time.perf_counter()
    await asyncio.gather(*(worker(c) for c in connections))
    elapsed = time.perf_counter() - started
    for connection in connections:
        connection.close()
    return total / elapsed, latencies


async def _paced(port: int, path: str, rate: int, seconds: int) -> list[float]:
    bodies = [_delivery() for _ in range(rate * seconds)]
    latencies: list[float] = []
    idle = [await _Connection(port).open() for _ in range(32)]

    async def one(body, headers):
        connection = idle.pop() if idle else await _Connection(port).open()
        started = time.perf_counter()
        await connection.post(path, body, headers)
        latencies.append(time.perf_counter() - started)
        idle.append(connection)

    tasks, start = [], time.perf_counter()
    for n, (body, headers) in enumerate(bodies):
        delay = start + n / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(body, headers)))
    await asyncio.gather(*tasks)
    for connection in idle:
        connection.close()
    return latencies


def _round_order(n: int) -> tuple[str, str]:
    """Which endpoint runs first in round n: bare, webhook, webhook, bare, bare, … (ABBA)."""
    return ("/bare", "/webhook") if n % 2 == 0 else ("/webhook", "/bare")


def _interleaved(port: int) -> tuple[list[tuple[float, list[float]]], list[float]]:
    """Alternate rounds of both endpoints in ABBA order, so a change in the machine's load (or the
    growth of the database) hits both alike and neither always runs first. Returns each endpoint's
    (req/s over all its rounds, latencies) and the ratio of every round pair."""
    totals = {"/bare": [0.0, []], "/webhook": [0.0, []]}
    per_round = CLOSED_LOOP_REQUESTS // ROUNDS
    ratios = []
    for n in range(ROUNDS):
        rates = {}
        for path in _round_order(n):
            rates[path], latencies = asyncio.run(_closed_loop(port, path, per_round))
            totals[path][0] += per_round / rates[path]
            totals[path][1] += latencies
        ratios.append(rates["/webhook"] / rates["/bare"])
    return [(CLOSED_LOOP_REQUESTS / seconds, latencies) for seconds, latencies in totals.values()], ratios


def _pct(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def _intake_figures(tmp: str) -> list[str]:
    from tests.spine.service import free_port
    port = free_port()
    proc = _start([sys.executable, "-m", "bench.intake", "serve", str(port)], _env(f"{tmp}/a"), port)
    try:
        asyncio.run(_closed_loop(port, "/bare", 200))  # warm both paths
        asyncio.run(_closed_loop(port, "/webhook", 200))
        ((bare_rps, bare_lat), (hook_rps, hook_lat)), ratios = _interleaved(port)
        paced = asyncio.run(_paced(port, "/webhook", PACED_RATE, PACED_SECONDS))
    finally:
        proc.terminate()
        proc.wait()
    return [
        f"{'endpoint':<34}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}",
        f"{'bare Starlette (same uvicorn)':<34}{bare_rps:>9.0f}{_pct(bare_lat, 50):>9.2f}{_pct(bare_lat, 99):>9.2f}",
        f"{'/webhook (HMAC, parse, job insert)':<34}{hook_rps:>9.0f}{_pct(hook_lat, 50):>9.2f}{_pct(hook_lat, 99):>9.2f}",
        f"ratio /webhook ÷ bare: {hook_rps / bare_rps:.2f} (aim >= 0.70), per round median "
        f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}); {CONCURRENCY} keep-alive "
        f"connections, same {len(_delivery()[0]) / 1024:.1f} KB signed payload, {CLOSED_LOOP_REQUESTS} requests each in {ROUNDS} "
        f"alternating (ABBA) rounds",
        f"ack at {PACED_RATE} req/s for {PACED_SECONDS} s: p50 {_pct(paced, 50):.2f} ms, "
        f"p99 {_pct(paced, 99):.2f} ms (aim p99 < 20 ms)",
    ]


def _eyes_figures(tmp: str) -> list[str]:
    from tests.fakes.github import FakeGitHub
    from tests.spine.service import free_port
    gh = FakeGitHub(app_id="4242", public_key=app_key()[1]).start()
    gh.add_repo("Codertocat/Hello-World")
    for number in range(1, EYES_DELIVERIES + 1):
        gh.add_issue("Codertocat/Hello-World", number)
        gh.add_comment("Codertocat/Hello-World", number, "@bot", comment_id=10_000 + number)
    port = free_port()
    env = _env(f"{tmp}/b", BOT_PORT=str(port), GITHUB_API_URL=gh.url, BOT_WORKERS="4",
               BOT_GIT_BASE_URL=f"file://{tmp}/no-remotes")  # jobs fail fast after the 👀
    proc = _start([sys.executable, "-m", "bot.cli", "serve"], env, port)
    sent: dict[int, float] = {}
    try:
        for number in range(1, EYES_DELIVERIES + 1):
            data = payload("issue_comment.created", "@bot codex explain this")
            data["issue"]["number"], data["comment"]["id"] = number, 10_000 + number
            body, headers = signed(data, "issue_comment")
            sent[10_000 + number] = time.time()
            httpx.post(f"http://127.0.0.1:{port}/webhook", content=body, headers=headers)
            time.sleep(0.1)
        gh.wait_for(lambda: len(gh.calls_to("POST", r"/issues/comments/\d+/reactions$")) >= EYES_DELIVERIES, 60)
    finally:
        proc.terminate()
        proc.wait()
        gh.stop()
    delays = [c.at - sent[int(c.path.split("/")[-2])] for c in gh.calls_to("POST", r"/issues/comments/\d+/reactions$")]
    return [f"delivery → 👀 at the fake GitHub ({len(delays)} deliveries, 10/s, 4 workers): "
            f"p50 {_pct(delays, 50):.1f} ms, p99 {_pct(delays, 99):.1f} ms, max {max(delays) * 1000:.1f} ms "
            f"(aim p99 < 200 ms; the first includes minting the installation token)"]


def run() -> list[str]:
    with tempfile.TemporaryDirectory(prefix="bench-intake-") as tmp:
        return _intake_figures(tmp) + _eyes_figures(tmp)


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]))
    else:
        print("\n".join(run()))
