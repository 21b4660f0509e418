"""`make soak` / `python -m bench soak`: the fault and load suite's figures (tests/ops/soak.py).

One large burst against a real `bot serve` with the fake GitHub and the fake provider, then short
bursts that put the two kill -9 at other points of the burst, so a window that needs the kill at
one exact moment cannot hide. The default is the issue's figure: 100 threads x 15 commands, with
20% duplicates and 10% ignorable comments about 2,000 deliveries (SOAK_THREADS, SOAK_PER_THREAD
scale it; SOAK_KILL_RUNS limits the short bursts). BOT_WORKERS is 8 for the large burst: the 10%
of writes answered 502 are retried with real backoff, which holds a worker while it waits.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from bench.size import pick, smoke

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.ops.soak import Burst  # noqa: E402

KILL_POINTS = [(0.1, 0.5), (0.25, 0.75), (0.4, 0.6), (0.55, 0.95)]


def _int(name: str, default: int) -> int:
    return int(os.environ.get(name) or default)


def _one(burst: Burst, label: str) -> tuple[list[str], bool]:
    with tempfile.TemporaryDirectory(prefix="bot-soak-") as base:
        started = time.monotonic()
        counts = burst.run(Path(base))
    clean = (counts.answered_twice, counts.duplicate_comments, counts.lost, counts.unfinished_jobs) == (0, 0, 0, 0) \
        and counts.terminal == counts.accepted
    lines = [f"{label}: {'exactly once' if clean else 'BROKEN'} ({time.monotonic() - started:.0f} s in all)"]
    return lines + [f"  {line}" for line in counts.lines()], clean


def run() -> list[str]:
    threads, per_thread = _int("SOAK_THREADS", pick(100, 4)), _int("SOAK_PER_THREAD", pick(15, 3))
    big = Burst(threads=threads, per_thread=per_thread, episode_share=0.02, write_502_share=0.1,
                rate_limit_share=0.02, slow_post_share=0.02, kills=() if smoke() else (0.3, 0.7), senders=16, seed=16, drain_timeout_s=1200,
                env_extra={"BOT_WORKERS": "8"})
    lines, clean = _one(big, f"burst of {threads} threads x {per_thread} commands, 2% agent runs")
    for n, kills in enumerate(KILL_POINTS[:_int("SOAK_KILL_RUNS", pick(len(KILL_POINTS), 1))]):
        small = Burst(threads=pick(30, 4), per_thread=2, episode_share=0.1, write_502_share=0.1, rate_limit_share=0.02,
                      slow_post_share=0.1, kills=kills, seed=100 + n, env_extra={"BOT_WORKERS": "4"})
        more, ok = _one(small, f"kills at {kills[0]:.0%} and {kills[1]:.0%} of 60 commands")
        lines += more
        clean = clean and ok
    if not clean:
        raise AssertionError("a command was answered twice, or not at all:\n" + "\n".join(lines))
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
