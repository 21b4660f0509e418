"""The fault and load suite, small: a burst against a real `bot serve` with duplicate deliveries,
edited and bot-authored comments, the fake GitHub answering 10% of writes 502 and some with a
secondary rate limit, the fake provider failing turns, and two kill -9 of the service at varied
points. Every accepted command ends with exactly one terminal comment. (`make soak` runs the
larger one and prints its figures: bench/soak.py.)"""
from __future__ import annotations

import pytest

from tests.ops.soak import Burst

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("kills", [(0.2, 0.6), (0.45, 0.9)], ids=["early", "late"])
def test_burst_with_two_kills_answers_every_command_exactly_once(tmp_path, kills):
    burst = Burst(threads=12, per_thread=2, episode_share=0.15, write_502_share=0.1, rate_limit_share=0.02,
                  kills=kills, seed=int(kills[0] * 100))
    counts = burst.run(tmp_path)
    print("\n".join(counts.lines()))
    assert counts.kills == 2 and counts.accepted == burst.threads * burst.per_thread
    assert (counts.terminal, counts.answered_twice, counts.duplicate_comments, counts.lost,
            counts.unfinished_jobs) == (counts.accepted, 0, 0, 0, 0)
