"""Trigger parser figures: what deciding a comment's command costs with the CommonMark/GFM parser
(bot/record/live_mentions.py), for ordinary comments and for crafted 65,536-character ones (GitHub's
cap on a comment), which anyone who may comment can post. p50 and p99 of `grammar.parse`.

Usage: python -m bench trigger
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adapters import base  # noqa: E402
from bench.stats import p50_p99_ms  # noqa: E402
from bot.intake import grammar  # noqa: E402

AGENTS = tuple(base.names())
COMMAND = "@bot codex fix the failing test\n"
MAX = 65_536
PARAGRAPH = "Some context with `code`, a [link](https://example.com) and <b>html</b>.\n\n"
BODIES = {
    "a command alone": COMMAND,
    "2 KB naming no one": PARAGRAPH * 28,
    "2 KB then a command": PARAGRAPH * 28 + COMMAND,
    "65 KB of unclosed [ after a command": COMMAND + "[" * (MAX - len(COMMAND)),
    "65 KB of ![ then a command": "![" * ((MAX - len(COMMAND)) // 2) + "\n\n" + COMMAND,
    "65 KB of *a after a command": COMMAND + "*a" * ((MAX - len(COMMAND)) // 2),
    "65 KB: a command on every line": "@bot\n" * (MAX // 5),
    "65 KB table, then a command": "|a|\n|-|\n" + "|x|\n" * ((MAX - 40) // 4) + "\n" + COMMAND,
    "65 KB of fence lines, then a command": "```\n" * ((MAX - 40) // 4) + COMMAND,
}


def run() -> list[str]:
    lines = []
    for name, body in BODIES.items():
        samples = []
        deadline = time.perf_counter() + 1.0
        while len(samples) < 5 or (time.perf_counter() < deadline and len(samples) < 200):
            started = time.perf_counter()
            grammar.parse(body, "bot", AGENTS)
            samples.append(time.perf_counter() - started)
        p50, p99 = p50_p99_ms(samples)
        lines.append(f"{name:40} p50 {p50:8.2f} ms   p99 {p99:8.2f} ms   ({len(body):,} chars)")
    return lines


if __name__ == "__main__":
    print("\n".join(run()))
