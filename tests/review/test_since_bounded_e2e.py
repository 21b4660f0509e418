"""End to end: a push whose diff since the last review explodes is reviewed with the diff cut at
the cap, and the agent is told it was cut."""
from __future__ import annotations

import pytest

from bot.review.since import MAX_DIFF_CHARS
from tests.fakes.provider import say
from tests.review.test_incremental_e2e import UTIL, first_review, world  # noqa: F401  (the fixture)
from tests.spine.service import scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]


@scenario
def test_a_push_whose_diff_explodes_is_reviewed_with_the_diff_said_to_be_cut(world):  # noqa: F811
    first = first_review(world)
    world.push({"util.py": UTIL + "x = 1\n" * 100_000})
    world.providers["codex"].script(say("Looked at it."))
    world.ask("@bot codex review", comment_id=7002)
    world.answer(nth=2)
    asked = world.providers["codex"].main_requests()[2].last_user_text
    assert f"… (the diff since `{first['commit_id'][:7]}` was cut at {MAX_DIFF_CHARS:,} characters)" in asked
