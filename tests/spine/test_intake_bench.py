"""The intake benchmark is fair to every endpoint it compares."""
from __future__ import annotations

from collections import Counter

from bench.intake import PATHS, _round_order


def test_over_six_rounds_every_endpoint_runs_first_second_and_third_alike():
    orders = [_round_order(n) for n in range(6)]
    assert all(sorted(order) == sorted(PATHS) for order in orders)
    for place in range(len(PATHS)):
        assert Counter(order[place] for order in orders) == dict.fromkeys(PATHS, 2)


def test_consecutive_rounds_do_not_start_with_the_same_endpoint():
    assert all(_round_order(n)[0] != _round_order(n + 1)[0] for n in range(12))
