"""`make bench`: every area's benchmark in one run, printed side by side.

Each module in this package named in SECTIONS exposes `run() -> list[str]` (report lines).
Usage: python -m bench [section ...]
"""
from __future__ import annotations

import importlib
import sys
import time
import traceback

SECTIONS = ("intake", "adapters", "sandbox", "bridge", "relay", "workspace", "scale", "review", "soak", "noisy")


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
            for line in module.run():
                print(f"  {line}", flush=True)
        except Exception:  # one broken section must not hide the others
            failed += 1
            traceback.print_exc()
        print(f"  ({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
