"""`make bench`: every area's benchmark in one run, printed side by side.

Each module in this package named in SECTIONS exposes `run() -> list[str]` (report lines), and
records its figures against their aims (bench/aims.py): the run ends with one table of them.
Each section runs with the environment it started with restored afterwards, so a variable one
section sets (a database URL, a data dir, a key) never reaches the next.
Usage: python -m bench [section ...]
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
import time
import traceback
from collections.abc import Iterator

from bench import aims

SECTIONS = ("intake", "adapters", "sandbox", "bridge", "relay", "workspace", "scale", "review", "soak", "noisy", "automations", "automation_events")


def main(argv: list[str]) -> int:
    chosen = argv or list(SECTIONS)
    failed = 0
    for name in chosen:
        print(f"\n== {name} ==", flush=True)
        started = time.perf_counter()
        try:
            module = importlib.import_module(f"bench.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"bench.{name}":
                raise
            print("  (no benchmark yet)")
            continue
        try:
            with _environment_restored():
                for line in module.run():
                    print(f"  {line}", flush=True)
        except Exception:  # one broken section must not hide the others
            failed += 1
            traceback.print_exc()
        print(f"  ({time.perf_counter() - started:.1f} s)")
    print("\n== aims ==")
    for line in aims.table():
        print(f"  {line}")
    return 1 if failed else 0


@contextlib.contextmanager
def _environment_restored() -> Iterator[None]:
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
