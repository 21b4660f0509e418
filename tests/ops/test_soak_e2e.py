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


def test_help_burst_on_a_slow_github_with_two_kills_answers_each_once(tmp_path):
    """The burst of the report (one `@bot help` per thread, 20% duplicate deliveries, two kill -9)
    on a GitHub that stores 10% of the comments 6 s after they were posted: a kill leaves posts in
    flight. With BOT_POST_SETTLE_SECONDS=0 this same burst answered 7 of the 60 commands twice."""
    burst = Burst(threads=60, commands=("help",), slow_post_share=0.1, kills=(0.3, 0.7), senders=16, seed=1,
                  env_extra={"BOT_WORKERS": "8"})
    counts = burst.run(tmp_path)
    print("\n".join(counts.lines()))
    assert counts.kills == 2 and counts.accepted == 60
    assert (counts.terminal, counts.answered_twice, counts.duplicate_comments, counts.lost) == (60, 0, 0, 0)
