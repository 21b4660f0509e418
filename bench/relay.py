"""Model relay benchmark: what the relay adds to one model call, against a direct connection to the
same fake provider.

Three processes, as in an episode: the fake provider (its own process, standing for the remote
provider), the relay (this process, as in the bot) and a client (its own process, standing for the
agent CLI). Every connection stays open between calls, as in production: the CLI's to the relay, the
relay's pooled one to the provider, and the direct client's to the provider (a fresh connection per
call would measure the relay's connection set-up, which a pooled client pays once per episode). Each call is a streamed
Anthropic Messages answer of 4,000 text deltas (a 4k-token answer, about 400 kB of SSE). Direct and
relayed calls alternate, so both see the same machine load. Reported: p50/p99 of the whole call
and of the time to first byte, each way, and what the relay adds (relayed minus direct).

Beside them, on the same path and in the same rounds, a do-nothing asyncio forwarder (its own
process, one kept upstream connection per client connection, bytes copied both ways unread): what
any Python hop adds. The relay's figure over the forwarder's is the ratio the relay is judged by.

The client pauses PAUSE_S before each call, as a CLI's calls are apart: what a hop does after a
call's last byte (the relay's record and its read of the usage) must not run into the next call,
which is the forwarder's two times in three, where it made the relay look faster than it is.

Beside the calls, the key guard's own CPU over one streamed answer (the same bytes, rendered here):
the benchmark's key is too plain to have runs searched for (only its exact forms are), so the line
also gives it for a key shaped like a real one, whose pieces are looked for in two more views.

What a hop adds is taken per round of three calls (its call minus the direct call of the same round),
so the load drifting on a shared machine cancels; the ratio is the median of ROUNDS per-round
ratios, printed with its quartiles and range. CPU per call is measured for the relay (this process)
and for the forwarder (its process, from /proc): a figure the machine's load hardly moves.
"""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import aims, rounds
from bench.rounds import process_cpu_s
from bench.size import pick
from bench.stats import p50_p99_ms
from bot.record.recorder import Recorder
from bot.relay.key_guard import KeyGuard
from bot.relay.retry import RetryPolicy
from bot.relay.server import ModelRelay, Upstream
from tests.fakes import provider as fake_provider

CALLS = pick(600, 40)
GUARD_RUNS = pick(50, 3)
WARMUP = pick(20, 2)
ROUNDS = pick(20, 4)  # the calls of each way cut into rounds, a ratio each
DELTAS = pick(4000, 200)
PAUSE_S = 0.005  # between calls: a CLI's calls are apart (it runs its tools in between)
KEY = "sk-bench-real"
# a real key's length and alphabet, made here (a literal one would look like a leaked key to a scanner)
KEY_SHAPED = "sk-bench-" + base64.urlsafe_b64encode(hashlib.sha512(b"bench relay").digest()).decode()[:86]
READ = 256 << 10  # what the relay reads of the provider at once (asyncio's), so what the guard is fed
ROOT = Path(__file__).resolve().parent.parent

# The fake provider renders each answer once: rendering 4,000 deltas takes it ~20 ms of CPU a call,
# whose swings under load would drown the few ms the hops add (the relay reads the same bytes).
PROVIDER = r"""
import sys
from tests.fakes import provider
from tests.fakes.provider import FakeProvider, say
rendered, render = {}, provider._render
def _render_once(api, path, body, turn, usage):
    key = (api, path, bool(body.get("stream")), turn.text, turn.pieces)
    if key not in rendered:
        rendered[key] = render(api, path, body, turn, usage)
    return rendered[key]
provider._render = _render_once
turns = int(sys.argv[1])
fake = FakeProvider().start()
fake.keep_alive = True
fake.script(*[say("abcd" * DELTAS, pieces=DELTAS) for _ in range(turns)], *[say("ok") for _ in range(turns)])
print(fake.url, flush=True)
sys.stdin.read()
""".replace("DELTAS", str(DELTAS))

FORWARDER = r"""
import asyncio, sys
from urllib.parse import urlsplit
upstream = urlsplit(sys.argv[1])

async def pipe(reader, writer):
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
    finally:
        writer.close()

async def serve(client_reader, client_writer):
    provider_reader, provider_writer = await asyncio.open_connection(upstream.hostname, upstream.port)
    await asyncio.gather(pipe(client_reader, provider_writer), pipe(provider_reader, client_writer))

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

asyncio.run(main())
"""

CLIENT = r"""
import http.client, json, sys, time
from urllib.parse import urlsplit
direct, relay, token, n, warmup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
forwarder = sys.argv[6]
bodies = {"stream": json.dumps({"model": "claude-opus-4-8", "stream": True, "max_tokens": 8192,
                                "messages": [{"role": "user", "content": "write 4k tokens"}]}).encode(),
          "small": json.dumps({"model": "claude-opus-4-8", "max_tokens": 16,
                               "messages": [{"role": "user", "content": "say ok"}]}).encode()}
kept = {}

def call(url, key, keep, phase):
    body = bodies[phase]
    parts = urlsplit(url)
    conn = kept.get(url) if keep else None
    if conn is None:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        if keep:
            kept[url] = conn
    started = time.perf_counter()
    conn.request("POST", "/v1/messages?beta=true", body, {"x-api-key": key, "content-type": "application/json",
                                                          "anthropic-version": "2023-06-01"})
    response = conn.getresponse()
    first = response.read(1)
    ttfb = time.perf_counter() - started
    rest = response.read()
    total = time.perf_counter() - started
    if response.status != 200 or (phase == "stream" and rest.count(b"content_block_delta") < DELTAS):
        raise SystemExit(f"bad answer from {url}: {response.status} {rest[:300]!r}")
    if not keep:
        conn.close()
    return total, ttfb

samples = {phase: {"direct": [], "relay": [], "forwarder": []} for phase in bodies}
ways = (("direct", direct, "sk-bench-real"), ("relay", relay, token), ("forwarder", forwarder, "sk-bench-real"))
for phase in bodies:
    for i in range(n + warmup):
        for name, url, key in ways[i % 3:] + ways[:i % 3]:  # each way first in a third of the rounds
            time.sleep(PAUSE)  # what a hop does after a call's last byte is done before the next call
            measured = call(url, key, True, phase)
            if i >= warmup:
                samples[phase][name].append(measured)
print(json.dumps(samples))
""".replace("DELTAS", str(DELTAS)).replace("PAUSE", str(PAUSE_S))


def run() -> list[str]:
    return asyncio.run(_measure())


def _helper(source: str, *args: str) -> tuple[subprocess.Popen, str]:
    """A helper process that prints its URL and stops when its stdin closes."""
    process = subprocess.Popen([sys.executable, "-c", source, *args], cwd=ROOT,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().strip()


async def _measure() -> list[str]:
    provider, fake_url = _helper(PROVIDER, str(3 * (CALLS + WARMUP)))
    forwarder, forwarder_url = _helper(FORWARDER, fake_url)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-relay-") as scratch:
            recorder = Recorder(Path(scratch) / "bot.db")
            run_id = recorder.start_run(agent="bench")
            upstream = Upstream("anthropic", KEY, base_url=fake_url)
            async with ModelRelay(upstream, recorder, run_id, retry=RetryPolicy(retries=0)) as relay:
                cpu = (time.process_time(), process_cpu_s(forwarder.pid))
                client = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", CLIENT, fake_url, relay.url, relay.token, str(CALLS), str(WARMUP),
                    forwarder_url, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
                out, err = await client.communicate()
                calls = 2 * (CALLS + WARMUP)
                cpu_ms = ((time.process_time() - cpu[0]) * 1000 / calls,
                          (process_cpu_s(forwarder.pid) - cpu[1]) * 1000 / calls)
                if client.returncode != 0:
                    raise RuntimeError(f"bench client failed: {err.decode()[-2000:]}")
                priced = [c for c in relay.calls if c.usage is not None]
            recorded = recorder.tier_counts(run_id)["enforced"]
    finally:
        for process in (forwarder, provider):
            process.stdin.close()
            process.wait(10)
    return _report(json.loads(out), len(priced), recorded, cpu_ms) + [_guard_line()]


def _guard_line() -> str:
    turn = fake_provider.say("abcd" * DELTAS, pieces=DELTAS)
    body = {"model": "claude-opus-4-8", "stream": True, "max_tokens": 8192, "messages": []}
    answer = fake_provider._render("anthropic", "/v1/messages", body, turn, fake_provider.FakeUsage())[1]
    pieces = [answer[at:at + READ] for at in range(0, len(answer), READ)]
    costs = [_guard_ms(KeyGuard([key]), pieces) for key in (KEY, KEY_SHAPED)]
    return (f"key guard over one streamed answer ({len(answer) // 1000} kB), CPU median of {GUARD_RUNS}: "
            f"the benchmark's key {costs[0]:.2f} ms, a key shaped like a real one {costs[1]:.2f} ms")


def _guard_ms(guard: KeyGuard, pieces: list[bytes]) -> float:
    times = []
    for _ in range(GUARD_RUNS):
        started = time.process_time()
        mask = guard.stream()
        passed = sum(len(mask.feed(piece)) for piece in pieces) + len(mask.close())
        times.append((time.process_time() - started) * 1000)
        assert passed == sum(map(len, pieces)) and not mask.found
    return statistics.median(times)


def _report(samples: dict, counted: int, recorded: int, cpu_ms: tuple[float, float]) -> list[str]:
    lines = []
    for phase, title in (("stream", f"streamed {DELTAS}-delta answer (~{DELTAS // 1000}k tokens, ~400 kB SSE)"),
                         ("small", "small answer (not streamed, ~0.3 kB)")):
        lines += [f"{title}, {CALLS} calls each way, alternating, in {ROUNDS} rounds:"] + _phase_lines(samples[phase], title)
    return lines + [f"CPU per call, both kinds averaged (load-independent): relay {cpu_ms[0]:.2f} ms, "
                    f"bare forwarder {cpu_ms[1]:.2f} ms",
                    f"({counted} calls counted with usage and cost, {recorded} recorded enforced, warm-up included)"]


def _phase_lines(samples: dict, title: str) -> list[str]:
    total = {name: p50_p99_ms([s[0] for s in values]) for name, values in samples.items()}
    ttfb = {name: p50_p99_ms([s[1] for s in values]) for name, values in samples.items()}
    direct = [s[0] for s in samples["direct"]]
    added = {name: rounds.added_ms([s[0] for s in samples[name]], direct) for name in ("relay", "forwarder")}
    ratio = rounds.ratio(added["relay"], added["forwarder"], ROUNDS)
    aims.record(f"relay ÷ bare forwarder, added per call ({title})", ratio.median if ratio.median is not None
                else float("nan"), at_most=1.5, floor=f"forwarder adds {statistics.median(added['forwarder']):.2f} ms")
    return [f"  whole call   direct p50 {total['direct'][0]:.2f} ms · p99 {total['direct'][1]:.2f} ms | "
            f"relayed p50 {total['relay'][0]:.2f} ms · p99 {total['relay'][1]:.2f} ms",
            f"  first byte   direct p50 {ttfb['direct'][0]:.2f} ms · p99 {ttfb['direct'][1]:.2f} ms | "
            f"relayed p50 {ttfb['relay'][0]:.2f} ms · p99 {ttfb['relay'][1]:.2f} ms",
            f"  relay adds per call (beside the direct call of its round): p50 {statistics.median(added['relay']):.2f} ms"
            f" · p99 {total['relay'][1] - total['direct'][1]:.2f} ms; to the first byte: "
            f"p50 {ttfb['relay'][0] - ttfb['direct'][0]:.2f} ms · p99 {ttfb['relay'][1] - ttfb['direct'][1]:.2f} ms",
            f"  bare asyncio forwarder adds p50 {statistics.median(added['forwarder']):.2f} ms (p99 "
            f"{total['forwarder'][1] - total['direct'][1]:.2f} ms)",
            f"  relay / forwarder p50 added, median of per-round ratios: "
            f"{ratio.text()}"]


if __name__ == "__main__":
    print("\n".join(run()))
