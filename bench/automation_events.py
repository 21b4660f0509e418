"""Delivery → first visible reaction of an event-triggered automation (issue 35): `bot serve` with
its workers, the fake GitHub holding a repository whose default branch declares the triage recipe
(`issues: {types: [opened]}`), and DELIVERIES `issues.opened` deliveries sent at 10 a second. Timed
from the delivery's send to the first thing the bot posts on that issue (the 👀 reaction or the
automation's tracking comment), as the fake GitHub received it: the worker's read of
`.github/bot.yml`, the match, the claim and the acknowledgement. The jobs then fail fast (no git
remote), which is after what is measured.

`python -m bench.automation_events` prints the same lines.
"""
from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench import aims
from bench.intake import _env, _pct, _start
from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.spine.helpers import app_key, payload, signed  # noqa: E402

DELIVERIES = pick(40, 3)
REPO = "Codertocat/Hello-World"
TRIAGE = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
          b"    prompt: Say whether the issue is a bug, a feature or a question.\n")
FIRST_NUMBER = 100
VISIBLE = re.compile(rf"^/repos/{REPO}/issues/(\d+)/(reactions|comments)$")


def _opened(number: int) -> tuple[bytes, dict]:
    data = payload("issues.opened")
    data["installation"] = {"id": 1}
    data["issue"]["number"], data["issue"]["id"] = number, 900_000 + number
    data["issue"]["body"] = "The README says Helo instead of Hello."
    return signed(data, "issues", f"bench-automation-{number}")


def _first_visible(gh, sent: dict[int, float]) -> dict[int, float]:
    first: dict[int, float] = {}
    for call in gh.calls:
        found = VISIBLE.match(call.path) if call.method == "POST" else None
        if found and int(found.group(1)) in sent:
            first.setdefault(int(found.group(1)), call.at - sent[int(found.group(1))])
    return first


def run() -> list[str]:
    from tests.fakes.github import FakeGitHub
    from tests.spine.service import free_port
    gh = FakeGitHub(app_id="4242", public_key=app_key()[1]).start()
    gh.add_repo(REPO)
    gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    numbers = range(FIRST_NUMBER, FIRST_NUMBER + DELIVERIES)
    for number in numbers:
        gh.add_issue(REPO, number)
    sent: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-automation-events-") as tmp:
        port = free_port()
        env = _env(f"{tmp}/b", BOT_PORT=str(port), GITHUB_API_URL=gh.url, BOT_WORKERS="4",
                   BOT_GIT_BASE_URL=f"file://{tmp}/no-remotes")
        proc = _start([sys.executable, "-m", "bot.cli", "serve"], env, port)
        try:
            for number in numbers:
                body, headers = _opened(number)
                sent[number] = time.time()
                httpx.post(f"http://127.0.0.1:{port}/webhook", content=body, headers=headers)
                time.sleep(0.1)
            gh.wait_for(lambda: len(_first_visible(gh, sent)) >= DELIVERIES, 120)
        finally:
            proc.terminate()
            proc.wait()
            gh.stop()
    delays = list(_first_visible(gh, sent).values())
    aims.record("issue opened → an automation's first visible reaction, p99 ms", _pct(delays, 99),
                at_most=1000, floor=f"p50 {_pct(delays, 50):.0f} ms; aim: under a second to the first reaction")
    return [f"issue opened → the triage automation's first visible reaction ({len(delays)} deliveries, 10/s, "
            f"4 workers): p50 {_pct(delays, 50):.1f} ms, p99 {_pct(delays, 99):.1f} ms, "
            f"max {max(delays) * 1000:.1f} ms (aim: under a second)"]


if __name__ == "__main__":
    print("\n".join(run()))
