"""The bench's table of aims (bench/aims.py): each row says whether its figure meets its aim."""
from __future__ import annotations

import pytest

from bench.aims import Row, table


def test_a_cost_at_most_its_aim_is_met_and_one_above_is_missed():
    assert Row("start", 1.9, 2.0, at_most=True).met and not Row("start", 2.1, 2.0, at_most=True).met


def test_a_speed_up_at_least_its_aim_is_met_and_one_below_is_missed():
    assert Row("clone", 25.0, 20.0, at_most=False).met and not Row("clone", 9.0, 20.0, at_most=False).met


def test_a_figure_that_could_not_be_measured_misses():
    assert not Row("ratio", float("nan"), 1.5, at_most=True).met


def test_the_table_names_the_rows_that_miss():
    lines = table([Row("a", 1.0, 2.0, at_most=True), Row("b", 3.0, 2.0, at_most=True, floor="x")])
    assert lines[-1] == "1 of 2 aims met; missed: b" and "MISSED" in lines[2] and lines[2].endswith("x")


def test_an_aim_is_one_bound_not_two():
    from bench import aims

    with pytest.raises(ValueError):
        aims.record("both", 1.0, at_most=2.0, at_least=0.5)
