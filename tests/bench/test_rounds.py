"""The relay bench's ratio: the median of per-round ratios of what each hop adds, with its spread."""
from __future__ import annotations

import pytest

from bench.rounds import added_ms, ratio


def test_what_a_hop_adds_is_taken_against_the_direct_call_of_the_same_round():
    assert added_ms([0.005, 0.009], [0.004, 0.006]) == pytest.approx([1.0, 3.0])


def test_the_ratio_is_the_median_of_the_per_round_ratios_with_their_quartiles_and_range():
    relay = [2.0, 2.0, 3.0, 3.0, 8.0, 8.0]  # three rounds of two calls: 2/1, 3/1, 8/2
    forwarder = [1.0, 1.0, 1.0, 1.0, 2.0, 2.0]
    found = ratio(relay, forwarder, rounds=3)
    assert (found.median, found.smallest, found.largest, found.rounds) == (3.0, 2.0, 4.0, 3)
    assert (found.low, found.high) == (2.5, 3.5)


def test_a_round_whose_forwarder_adds_nothing_measurable_is_left_out():
    found = ratio([2.0, 5.0], [1.0, 0.0], rounds=2)
    assert (found.median, found.rounds) == (2.0, 1)


def test_no_measurable_round_says_so_instead_of_a_number():
    assert ratio([2.0], [0.0], rounds=1).text() == "n/a (the forwarder adds nothing measurable)"
