"""End to end: one comment asks two real agent CLIs for a review; both run at once, one merged
review arrives, a shared finding is attributed to both, and one agent failing sinks nothing."""
from __future__ import annotations

import pytest

from bot.record.recorder import Recorder
from bot.service import store
from tests.fakes.provider import call, fail, say
from tests.review.world import BUG_LINE

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
FIX = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts instead of adding.", "severity": "important"}
DOC = {"path": "app.py", "line": 1, "side": "RIGHT", "body": "Put a blank line after the module docstring.",
       "severity": "nit"}


def runs(world) -> list[dict]:
    db = store.connect(world.tmp / "data" / "bot.db")
    return [Recorder(db).run(row["id"]) for row in db.query("SELECT id FROM runs ORDER BY started_at")]


def sessions(world) -> dict[str, str]:
    db = store.connect(world.tmp / "data" / "bot.db")
    return {row["agent"]: row["session_id"] for row in db.query("SELECT agent, session_id FROM sessions")}


@pytest.fixture
def two_agents(world):
    world.providers["claude"].script(call("suggest_change", FIX), say("add() is broken."))
    world.providers["codex"].script(call("suggest_change", {**FIX, "body": "Bug: add() subtracts instead of adding"}),
                                    call("comment_on_line", DOC), say("Two remarks."))
    world.ask("@bot review with claude, codex")
    world.answer()
    return world


def test_two_agents_post_one_review(two_agents):
    assert len(two_agents.reviews()) == 1


def test_the_shared_finding_appears_once_attributed_to_both(two_agents):
    [review] = two_agents.reviews()
    at_bug = [c for c in review["_comments"] if c["line"] == BUG_LINE]
    assert len(at_bug) == 1 and "found by claude, codex" in at_bug[0]["body"]
    assert [c["line"] for c in review["_comments"]] == [1, BUG_LINE]
    assert "| claude | 1 | 1 | 0 | ✅ finished |" in review["body"]
    assert "| codex | 2 | 1 | 0 | ✅ finished |" in review["body"]


def test_the_two_episodes_overlap_in_time(two_agents):
    first, second = runs(two_agents)
    assert {first["agent"], second["agent"]} == {"claude", "codex"}
    assert second["started_at"] < first["finished_at"]


def test_each_agent_session_is_stored_for_the_thread(two_agents):
    stored = sessions(two_agents)
    assert set(stored) == {"claude", "codex"} and all(stored.values())


def test_a_failing_agent_does_not_sink_the_review(world):
    world.providers["claude"].script(call("suggest_change", FIX), say("add() is broken."))
    world.providers["codex"].script(*[fail(500, "mock provider outage (FAIL_500)")] * 30)
    world.ask("@bot claude, codex review")
    answer = world.answer()
    [review] = world.reviews()
    assert [c["line"] for c in review["_comments"]] == [BUG_LINE]
    assert "| codex | — | — | — | ❌ failed:" in review["body"]
    assert "codex failed:" in answer
