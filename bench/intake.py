"""Intake figures, loopback only, bounded loops:

1. throughput and p50/p99 latency of POST /webhook (signature check, parse, dedupe, job insert)
   against a bare Starlette endpoint on the SAME uvicorn process, and the ratio (aim >= 0.50,
   issue 33; it was 0.70); and against a durable floor on the same process: a Starlette endpoint
   that does only what any durable intake must (the HMAC over the body, the JSON parse, one
   INSERT of a job row of the same shape into the same table, committed before the 202), none of
   the bot's own work (no decision, dedupe, group commit or JSON answer);
2. p50/p99 acknowledgement latency at an open-loop 200 requests/s (aim p99 < 20 ms);
3. delivery → 👀 latency at the fake GitHub with the workers running (aim p99 < 200 ms).

`python -m bench.intake` prints the same lines; `python -m bench.intake serve PORT` is the server.
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
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
import orjson
from starlette.requests import Request
from starlette.responses import Response

from bench import aims
from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.spine.helpers import SECRET, app_key, payload, signed  # noqa: E402

CLOSED_LOOP_REQUESTS = pick(4000, 200)
ROUNDS = pick(6, 3)  # a multiple of 3: each endpoint runs first, second and third alike
CONCURRENCY = pick(16, 4)
PACED_RATE = pick(200, 50)
PACED_SECONDS = pick(5, 1)
EYES_DELIVERIES = pick(60, 5)


def serve(port: int) -> None:
    """The intake app plus the bare endpoint and the durable floor, on one uvicorn (no workers:
    the request path only)."""
    import uvicorn
    from starlette.routing import Route

    from bot.web.app import create_app

    app = create_app(start_workers=False)
    app.router.routes.append(Route("/bare", _bare, methods=["POST"]))
    app.router.routes.append(Route("/floor", _floor, methods=["POST"]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


async def _bare(request: Request) -> Response:
    await request.body()
    return Response(status_code=202)


async def _floor(request: Request) -> Response:
    """What any intake that answers 202 only for a stored delivery does, and nothing more: the
    HMAC, the JSON parse and one job row (about the size of the bot's spec) committed in a
    transaction of its own on the service's SQLite connection (WAL, synchronous=NORMAL, as the
    bot's), with the jobs table's indexes."""
    body = await request.body()
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(request.headers.get("x-hub-signature-256", ""), expected):
        return Response(status_code=401)
    data = orjson.loads(body)
    repo, number, comment = data["repository"]["full_name"], data["issue"]["number"], data["comment"]
    spec = {"repo": repo, "number": number, "author": comment["user"]["login"], "body": comment["body"],
            "target": {"type": "issue_comment", "id": comment["id"]}, "title": data["issue"]["title"],
            "event": request.headers["x-github-event"], "action": data["action"],
            "installation_id": data["installation"]["id"], "association": comment["author_association"]}
    conn = request.app.state.db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO jobs (delivery_id, trigger_key, kind, conversation, spec, created_at) "
                     "VALUES (?, ?, 'floor', ?, ?, ?)", [request.headers["x-github-delivery"],
                                                        f"floor:{comment['id']}", f"{repo}#{number}",
                                                        orjson.dumps(spec).decode(), time.time()])
    except BaseException:  # left open, every later write of the process (/webhook's too) would sit inside it
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return Response(status_code=202)


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


PATHS = ("/bare", "/floor", "/webhook")


def _round_order(n: int) -> tuple[str, ...]:
    """Which endpoint runs when in round n: the three rotated every other round and reversed in
    between, so over each 6 rounds every endpoint runs first, second and third twice."""
    turn = n // 2 % len(PATHS)
    order = PATHS[turn:] + PATHS[:turn]
    return order if n % 2 == 0 else order[::-1]


def _interleaved(port: int) -> tuple[dict[str, tuple[float, list[float]]], dict[str, list[float]]]:
    """Rounds of every endpoint in turn (`_round_order`), so a change in the machine's load (or the
    growth of the database) hits them alike and none always runs first. Returns each endpoint's
    (req/s over all its rounds, latencies) and, per round, /webhook's rate over each other's."""
    seconds: dict[str, float] = dict.fromkeys(PATHS, 0.0)
    latencies: dict[str, list[float]] = {path: [] for path in PATHS}
    per_round = CLOSED_LOOP_REQUESTS // ROUNDS
    ratios: dict[str, list[float]] = {"/bare": [], "/floor": []}
    for n in range(ROUNDS):
        rates = {}
        for path in _round_order(n):
            rates[path], these = asyncio.run(_closed_loop(port, path, per_round))
            seconds[path] += per_round / rates[path]
            latencies[path] += these
        for base in ratios:
            ratios[base].append(rates["/webhook"] / rates[base])
    return {path: (per_round * ROUNDS / seconds[path], latencies[path]) for path in PATHS}, ratios


def _pct(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] * 1000
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def _intake_figures(tmp: str) -> list[str]:
    from tests.spine.service import free_port
    port = free_port()
    proc = _start([sys.executable, "-m", "bench.intake", "serve", str(port)], _env(f"{tmp}/a"), port)
    try:
        for path in PATHS:  # warm every path
            asyncio.run(_closed_loop(port, path, 200))
        figures, ratios = _interleaved(port)
        paced = asyncio.run(_paced(port, "/webhook", PACED_RATE, PACED_SECONDS))
    finally:
        proc.terminate()
        proc.wait()
    labels = {"/bare": "bare Starlette (same uvicorn)", "/floor": "durable floor (HMAC, parse, INSERT)",
              "/webhook": "/webhook (HMAC, parse, job insert)"}
    rate = {path: figures[path][0] for path in PATHS}
    aims.record("intake /webhook ÷ bare Starlette", rate["/webhook"] / rate["/bare"], at_least=0.5,
                floor=f"durable floor ÷ bare {rate['/floor'] / rate['/bare']:.2f}")
    return [
        f"{'endpoint':<36}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}",
        *(f"{labels[path]:<36}{rate[path]:>9.0f}{_pct(figures[path][1], 50):>9.2f}{_pct(figures[path][1], 99):>9.2f}"
          for path in PATHS),
        f"ratio /webhook ÷ bare: {rate['/webhook'] / rate['/bare']:.2f} (aim >= 0.50), per round median "
        f"{statistics.median(ratios['/bare']):.2f} ({min(ratios['/bare']):.2f}–{max(ratios['/bare']):.2f}); "
        f"÷ durable floor: {rate['/webhook'] / rate['/floor']:.2f}, per round median "
        f"{statistics.median(ratios['/floor']):.2f} ({min(ratios['/floor']):.2f}–{max(ratios['/floor']):.2f})",
        f"{CONCURRENCY} keep-alive connections, same {len(_delivery()[0]) / 1024:.1f} KB signed payload, "
        f"{CLOSED_LOOP_REQUESTS // ROUNDS * ROUNDS} requests each in {ROUNDS} rounds taken in turn",
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
