"""The intake benchmark is fair to both endpoints."""
from __future__ import annotations

from bench.intake import _round_order


def test_rounds_alternate_which_endpoint_goes_first():
    """ABBA order: neither the bare endpoint nor /webhook always runs first in its round pair."""
    assert [_round_order(n) for n in range(4)] == [("/bare", "/webhook"), ("/webhook", "/bare")] * 2
