"""Review figures: what a re-review costs against the first review. A 20-file pull request is
reviewed by codex through `bot serve` (the real CLI, the fake provider); one file is pushed; the
re-review covers what changed since. The scripted agent reads each file the request names (as a
reviewer does) and leaves one finding; the provider counts what the CLI sent: the characters of
every model request's body, and tokens estimated at four characters each. Aim: the re-review
costs well under half the first.
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.provider import bridged, call, say  # noqa: E402
from tests.review.world import BUG_LINE, open_world  # noqa: E402

FILES = 20
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts: it must add.",
       "severity": "important"}


def module(n: int, extra: str = "") -> str:
    body = "".join(f"def f{n}_{i}(x):\n    return x + {i}\n\n\n" for i in range(20))
    return f'"""Module {n}."""\n\n\n{body}{extra}'


def _sent(requests: list) -> int:
    return sum(len(json.dumps(r.body)) for r in requests)


def _reviewed_files(text: str) -> list[str]:
    found = re.search(r"Files to review \(\d+ of \d+\): (.*?)\.\n", text)
    return found.group(1).split(", ") if found else []


def run() -> list[str]:
    extra = {f"mod{n:02d}.py": module(n) for n in range(1, FILES)}
    with tempfile.TemporaryDirectory() as tmp, open_world(Path(tmp), extra=extra) as world:
        codex = world.providers["codex"]
        codex.script(*[bridged("read_file", {"path": name}) for name in ["app.py", *sorted(extra)]],
                     call("comment_on_line", BUG), say("One bug."))
        world.ask("@bot codex review")
        world.answer(timeout=900)
        first = list(codex.main_requests())
        world.push({"mod07.py": module(7, "def added(x):\n    return x\n")})
        codex.script(bridged("read_file", {"path": "mod07.py"}), say("Nothing new."))
        world.ask("@bot codex review", comment_id=7002)
        world.answer(timeout=900, nth=2)
        second = codex.main_requests()[len(first):]
        asked = _reviewed_files(second[0].last_user_text)
    a, b = _sent(first), _sent(second)
    return [f"first review of {FILES} files: {len(first)} model requests, {a:,} characters sent (~{a // 4:,} tokens)",
            f"re-review after a one-file push ({', '.join(asked)}): {len(second)} model requests, {b:,} characters "
            f"(~{b // 4:,} tokens)",
            f"re-review / first review: {b / a:.2f}x (aim < 0.5x)"]


if __name__ == "__main__":
    for line in run():
        print(line)
