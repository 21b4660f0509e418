"""End to end, with real CLIs against the fakes: a read-only organisation member's "won't fix" on the
bot's finding declines nothing (GitHub is asked for their permission), so the re-review still
holds the finding against the pull request and the check run still fails; a writer's reply does
decline it."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, PR, open_world
from tests.spine.service import REPO

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts.", "severity": "important"}


@pytest.fixture
def checked(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  check_run: true\n  quiet: false\n") as world:
        yield world


def reviewed_then_replied(world, login: str, permission: str) -> None:
    world.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
    world.ask("@bot codex review")
    world.answer()
    [comment] = world.reviews()[0]["_comments"]
    world.gh.set_permission(REPO, login, permission)
    world.gh.add_review_comment(REPO, PR, "Won't fix", user=login, path="app.py", line=BUG_LINE,
                                in_reply_to=comment["id"], association="MEMBER")
    world.providers["codex"].script(call("comment_on_line", BUG), say("The bug is still there."))
    world.ask("@bot codex review", comment_id=7002)
    world.answer(nth=2)


def test_a_read_only_members_wont_fix_leaves_the_finding_open_and_the_check_failing(checked):
    reviewed_then_replied(checked, "mallory", "read")
    body = checked.reviews()[1]["body"]
    assert "1 reply or resolution on earlier findings not counted" in body
    assert "1 earlier finding is still open" in body and "skipped as declined" not in body
    assert "declined these earlier findings" not in checked.providers["codex"].main_requests()[2].last_user_text
    assert [r["conclusion"] for r in checked.gh.check_runs_of(REPO)] == ["failure", "failure"]


def test_a_writers_wont_fix_declines_the_finding(checked):
    reviewed_then_replied(checked, "alice", "write")
    body = checked.reviews()[1]["body"]
    assert "1 finding skipped as declined earlier" in body and "not counted" not in body
    assert "declined these earlier findings" in checked.providers["codex"].main_requests()[2].last_user_text
