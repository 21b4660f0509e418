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
"""
from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.stats import p50_p99_ms
from bot.record.recorder import Recorder
from bot.relay.retry import RetryPolicy
from bot.relay.server import ModelRelay, Upstream

CALLS = 200
WARMUP = 20
DELTAS = 4000
ROOT = Path(__file__).resolve().parent.parent

PROVIDER = r"""
import sys
from tests.fakes.provider import FakeProvider, say
turns = int(sys.argv[1])
fake = FakeProvider().start()
fake.keep_alive = True
fake.script(*[say("abcd" * DELTAS, pieces=DELTAS) for _ in range(turns)], *[say("ok") for _ in range(turns)])
print(fake.url, flush=True)
sys.stdin.read()
""".replace("DELTAS", str(DELTAS))

CLIENT = r"""
import http.client, json, sys, time
from urllib.parse import urlsplit
direct, relay, token, n, warmup = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
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

samples = {phase: {"direct": [], "relay": []} for phase in bodies}
for phase in bodies:
    for i in range(n + warmup):
        for name, url, key, keep in (("direct", direct, "sk-bench-real", True), ("relay", relay, token, True)):
            measured = call(url, key, keep, phase)
            if i >= warmup:
                samples[phase][name].append(measured)
print(json.dumps(samples))
""".replace("DELTAS", str(DELTAS))


def run() -> list[str]:
    return asyncio.run(_measure())


async def _measure() -> list[str]:
    provider = subprocess.Popen([sys.executable, "-c", PROVIDER, str(2 * (CALLS + WARMUP))], cwd=ROOT,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        fake_url = provider.stdout.readline().strip()
        with tempfile.TemporaryDirectory(prefix="bench-relay-") as scratch:
            recorder = Recorder(Path(scratch) / "bot.db")
            run_id = recorder.start_run(agent="bench")
            upstream = Upstream("anthropic", "sk-bench-real", base_url=fake_url)
            async with ModelRelay(upstream, recorder, run_id, retry=RetryPolicy(retries=0)) as relay:
                cpu_started = time.process_time()
                client = await asyncio.create_subprocess_exec(
                    sys.executable, "-c", CLIENT, fake_url, relay.url, relay.token, str(CALLS), str(WARMUP),
                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
                out, err = await client.communicate()
                cpu_ms = (time.process_time() - cpu_started) * 1000 / (2 * (CALLS + WARMUP))
                if client.returncode != 0:
                    raise RuntimeError(f"bench client failed: {err.decode()[-2000:]}")
                priced = [c for c in relay.calls if c.usage is not None]
            recorded = recorder.tier_counts(run_id)["enforced"]
    finally:
        provider.stdin.close()
        provider.wait(10)
    return _report(json.loads(out), len(priced), recorded, cpu_ms)


def _report(samples: dict, counted: int, recorded: int, cpu_ms: float) -> list[str]:
    lines = []
    for phase, title in (("stream", f"streamed {DELTAS}-delta answer (~{DELTAS // 1000}k tokens, ~400 kB SSE)"),
                         ("small", "small answer (not streamed, ~0.3 kB)")):
        lines += [f"{title}, {CALLS} calls each way, alternating:"] + _phase_lines(samples[phase])
    return lines + [f"relay CPU per relayed call, both kinds averaged (load-independent): {cpu_ms:.2f} ms",
                    f"({counted} calls counted with usage and cost, {recorded} recorded enforced, warm-up included)"]


def _phase_lines(samples: dict) -> list[str]:
    total = {name: p50_p99_ms([s[0] for s in values]) for name, values in samples.items()}
    ttfb = {name: p50_p99_ms([s[1] for s in values]) for name, values in samples.items()}
    return [f"  whole call   direct p50 {total['direct'][0]:.2f} ms · p99 {total['direct'][1]:.2f} ms | "
            f"relayed p50 {total['relay'][0]:.2f} ms · p99 {total['relay'][1]:.2f} ms",
            f"  first byte   direct p50 {ttfb['direct'][0]:.2f} ms · p99 {ttfb['direct'][1]:.2f} ms | "
            f"relayed p50 {ttfb['relay'][0]:.2f} ms · p99 {ttfb['relay'][1]:.2f} ms",
            f"  relay adds per call: p50 {total['relay'][0] - total['direct'][0]:.2f} ms · "
            f"p99 {total['relay'][1] - total['direct'][1]:.2f} ms; to the first byte: "
            f"p50 {ttfb['relay'][0] - ttfb['direct'][0]:.2f} ms · p99 {ttfb['relay'][1] - ttfb['direct'][1]:.2f} ms"]


if __name__ == "__main__":
    print("\n".join(run()))
