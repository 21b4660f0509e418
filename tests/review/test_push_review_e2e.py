"""End to end: with reviews.on_push, pushes to a reviewed pull request in quick succession give one
incremental review, of the last head."""
from __future__ import annotations

import threading

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts: it must add.",
       "severity": "important"}
UTIL = "def double(x):\n    return 2 * x\n"
BOT_YML = "reviews:\n  on_push: true\n"


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path, bot_yml=BOT_YML, extra={"util.py": UTIL}) as opened:
        opened.gh.add_content(REPO, ".github/bot.yml", BOT_YML.encode())  # the gate reads it through the API
        yield opened


def hold_next_answer(provider) -> tuple[threading.Event, threading.Event]:
    """The provider's next answer waits for `release`; `arrived` is set when its request came."""
    arrived, release, answer = threading.Event(), threading.Event(), provider.answer

    def held(request):
        if not arrived.is_set():
            arrived.set()
            release.wait(600)
        return answer(request)
    provider.answer = held
    return arrived, release


@scenario
def test_pushes_in_quick_succession_give_one_incremental_review_of_the_last_head(world):
    codex = world.providers["codex"]
    codex.script(call("comment_on_line", BUG), say("One bug."))
    world.ask("@bot codex review")
    first = world.answer()
    codex.script(say("It adds two numbers, wrongly."), call("resolve_finding", {"finding": 1, "status": "still_present"}),
                 say("Still there."))
    arrived, release = hold_next_answer(codex)
    world.ask("@bot codex what does add() do?", comment_id=7002)  # the thread is busy while the pushes come
    assert arrived.wait(300), first
    world.push({"util.py": UTIL + "# one\n"})
    queued = world.synchronize()
    last = world.push({"util.py": UTIL + "# one\n# two\n"})
    again = world.synchronize()
    release.set()
    answer = world.answer(nth=3, timeout=600)
    assert queued["queued"] and again["job"] == queued["job"]
    # nothing new to say, and no comment asked (a push): no review, one line naming the head it reviewed
    assert len(world.reviews()) == 1 and answer.startswith(f"✅ codex reviewed `{last[:7]}`: no issues found in 1 file.")
