"""The aims `make bench` is judged by (issue 33): each section records its figure beside its aim and
its floor or anchor, and the run ends with one table saying which rows miss their aim.

    aims.record("tier-1 start ÷ bwrap alone", 2.3, at_most=2.0, floor="bwrap alone 6.8 ms")
    print("\\n".join(aims.table()))

A missed aim is reported, not a failure: the figures move with the machine's load, and the suite's
smoke run checks that every section still runs, not how fast.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    figure: float
    aim: float
    at_most: bool  # the figure must be at most the aim (a cost), else at least (a speed-up)
    floor: str = ""  # the floor or anchor the figure is measured against

    @property
    def met(self) -> bool:
        if math.isnan(self.figure):
            return False
        return self.figure <= self.aim if self.at_most else self.figure >= self.aim

    @property
    def aim_text(self) -> str:
        return f"{'<=' if self.at_most else '>='} {self.aim:g}"


ROWS: list[Row] = []


def record(name: str, figure: float, *, at_most: float | None = None, at_least: float | None = None,
           floor: str = "") -> None:
    """One figure against its aim; give exactly one of `at_most` and `at_least`."""
    if (at_most is None) == (at_least is None):
        raise ValueError("an aim is either at_most or at_least")
    aim = at_most if at_most is not None else at_least
    assert aim is not None
    ROWS.append(Row(name, figure, aim, at_most is not None, floor))


def table(rows: list[Row] | None = None) -> list[str]:
    """One line per row (figure, aim, met or MISSED, floor), then which rows miss."""
    rows = ROWS if rows is None else rows
    if not rows:
        return ["(no section recorded an aim)"]
    width = max(len(row.name) for row in rows)
    lines = [f"{'aim':<{width}}  {'figure':>8}  {'aim':>8}  {'':6}  floor or anchor"]
    lines += [f"{row.name:<{width}}  {row.figure:>8.2f}  {row.aim_text:>8}  {'met' if row.met else 'MISSED':6}  "
              f"{row.floor}" for row in rows]
    missed = [row.name for row in rows if not row.met]
    lines.append(f"{len(rows) - len(missed)} of {len(rows)} aims met" +
                 (f"; missed: {', '.join(missed)}" if missed else ""))
    return lines
