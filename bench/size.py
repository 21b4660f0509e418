"""How big a benchmark runs: its full size for `make bench`, or a smoke size of seconds when
BENCH_SMOKE=1 (the suite runs every section so, tests/bench/test_smoke.py: a section that no longer
runs fails `make test`, not the next person's `make bench`). Read at import: a section's sizes are
its module constants."""
from __future__ import annotations

import os


def smoke() -> bool:
    return os.environ.get("BENCH_SMOKE") == "1"


def pick(full: int, smoke_size: int) -> int:
    return smoke_size if smoke() else full


def seconds(full: float, smoke_size: float) -> float:
    return smoke_size if smoke() else full
