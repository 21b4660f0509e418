"""What a hop adds to a call, measured against a direct call made in the same round, and the ratio of
two hops' added latency as the median of per-round ratios with its spread.

The calls of one round alternate direct, hop A, hop B (each first in turn), so a difference between
consecutive calls cancels the load that drifts on a shared machine; a round's figure is the median
of its differences, and the ratio's spread across rounds says how far one run can be trusted.
"""
from __future__ import annotations

import os
import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class Ratio:
    median: float | None  # None when no round's denominator was measurable
    low: float | None  # the first and third quartiles of the per-round ratios
    high: float | None
    smallest: float | None
    largest: float | None
    rounds: int  # rounds with a measurable ratio

    def text(self) -> str:
        if self.median is None or self.low is None or self.high is None:
            return "n/a (the forwarder adds nothing measurable)"
        return (f"{self.median:.2f}x (quartiles {self.low:.2f}–{self.high:.2f}x, range "
                f"{self.smallest:.2f}–{self.largest:.2f}x, {self.rounds} rounds)")


def added_ms(hop: list[float], direct: list[float]) -> list[float]:
    """Per call, in ms: what the hop's call took beyond the direct call of the same round."""
    return [(h - d) * 1000 for h, d in zip(hop, direct, strict=True)]


def per_round(values: list[float], rounds: int) -> list[list[float]]:
    """`values` in call order cut into `rounds` consecutive runs of equal length (the rest dropped)."""
    size = len(values) // rounds
    return [values[r * size:(r + 1) * size] for r in range(rounds)] if size else []


def ratio(numerator_ms: list[float], denominator_ms: list[float], rounds: int) -> Ratio:
    """The median over rounds of (round median of numerator) / (round median of denominator); a round
    whose denominator is under 0.01 ms (lost in the noise) is left out."""
    ratios = sorted(statistics.median(n) / statistics.median(d)
                    for n, d in zip(per_round(numerator_ms, rounds), per_round(denominator_ms, rounds), strict=True)
                    if statistics.median(d) > 0.01)
    if not ratios:
        return Ratio(None, None, None, None, None, 0)
    low, _, high = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else ratios * 3
    return Ratio(statistics.median(ratios), low, high, ratios[0], ratios[-1], len(ratios))


def process_cpu_s(pid: int) -> float:
    """User and system CPU seconds another process has spent so far (Linux /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
