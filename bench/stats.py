"""The percentiles every benchmark reports, computed one way."""
from __future__ import annotations

import statistics


def p50_p99_ms(samples_s: list[float]) -> tuple[float, float]:
    """Median and 99th percentile, in milliseconds, of samples in seconds."""
    ms = sorted(s * 1000 for s in samples_s)
    return statistics.median(ms), statistics.quantiles(ms, n=100, method="inclusive")[98]
