"""Review figures: what a re-review costs against the first review. A 20-file pull request is
reviewed by codex through `bot serve` (the real CLI, the fake provider); one file is pushed; the
re-review covers what changed since. The scripted agent reads each file the request names (as a
reviewer does) and leaves one finding; the provider counts what the CLI sent: the characters of
every model request's body, and tokens estimated at four characters each. Aim: the re-review
costs well under half the first. Then what the repository's review rules add to a first request:
50 rule files (REVIEW.md at the root and in 49 folders), a pull request touching three folders.
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
RULE_FOLDERS = 49  # and the root's: 50 rule files
TOUCHED = (3, 17, 42)  # the folders the pull request changes
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
        world.gh.wait_for(lambda: _finished(world) == 2, timeout=900)  # nothing new: a quiet review, no comment
        second = codex.main_requests()[len(first):]
        asked = _reviewed_files(second[0].last_user_text)
    a, b = _sent(first), _sent(second)
    return [f"first review of {FILES} files: {len(first)} model requests, {a:,} characters sent (~{a // 4:,} tokens)",
            f"re-review after a one-file push ({', '.join(asked)}): {len(second)} model requests, {b:,} characters "
            f"(~{b // 4:,} tokens)",
            f"re-review / first review: {b / a:.2f}x (aim < 0.5x)", *rules_run()]


def _finished(world) -> int:
    return len(world.service.database().query("SELECT 1 FROM jobs WHERE status NOT IN ('queued', 'running')"))


def _rule(n: int) -> str:
    return (f"# Review rules of pkg{n:02d}\n\n- Every public function of pkg{n:02d} validates its arguments.\n"
            f"- Errors are returned, never printed; flag a bare except.\n- Do not flag missing docstrings in tests.\n")


def rules_run() -> list[str]:
    on_main = {"REVIEW.md": _rule(0), **{f"pkg{n:02d}/REVIEW.md": _rule(n) for n in range(1, RULE_FOLDERS + 1)}}
    extra = {f"pkg{n:02d}/mod.py": module(n) for n in TOUCHED}
    with tempfile.TemporaryDirectory() as tmp, open_world(Path(tmp), on_main=on_main, extra=extra) as world:
        codex = world.providers["codex"]
        codex.script(say("Looks fine."))
        world.ask("@bot codex review")
        world.gh.wait_for(lambda: _finished(world) == 1, timeout=900)
        asked = codex.main_requests()[0].last_user_text
        whole = _sent(codex.main_requests()[:1])
    start = asked.find("Review rules this repository keeps")
    section = asked[start:asked.index("For each problem", start)] if start >= 0 else ""
    applied = section.count("```markdown")
    return [f"rules: {len(on_main)} rule files in the repository, a diff touching {len(TOUCHED)} folders: {applied} "
            f"sent, {len(section):,} characters (~{len(section) // 4:,} tokens) of a first request of {whole:,} "
            f"characters ({len(section) / whole:.1%})"]


if __name__ == "__main__":
    for line in run():
        print(line)
