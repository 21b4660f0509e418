"""End to end: `@bot review` on a service with BOT_PUBLIC_URL and sign-in set, as every deployment
has them: the review lands and each agent's tracking line links its run page (the review's
per-agent tracking once reached the tracking comment's header and crashed every review)."""
from __future__ import annotations

import re

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, open_world

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
PUBLIC = "https://bot.example.com"
FINDING = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts.", "severity": "important"}


@pytest.mark.parametrize("agents", ["codex", "codex, claude"])
def test_a_review_with_a_public_url_posts_its_review_and_links_each_run_page(tmp_path, agents):
    with open_world(tmp_path, BOT_PUBLIC_URL=PUBLIC, GITHUB_CLIENT_ID="Iv1.0123456789abcdef",
                    GITHUB_CLIENT_SECRET="0123456789abcdef0123456789abcdef01234567") as world:
        names = agents.split(", ")
        for name in names:
            world.providers[name].script(call("comment_on_line", FINDING), say("One bug."))
        world.ask(f"@bot review with {agents}")
        answer = world.answer()
        assert "AttributeError" not in answer
        [review] = world.reviews()
        assert review["_comments"], answer
        assert "| tier |" not in review["body"] and "sandbox tier" not in review["body"]  # the answer keeps them
        assert review["body"].count(f"]({PUBLIC}/runs/") == len(names)
        edits = [c.body["body"] for c in world.gh.calls_to("PATCH", r"/issues/comments/\d+$")]
        linked = {m.group(1) for body in edits for m in re.finditer(re.escape(PUBLIC) + r"/runs/([0-9a-f]{32})", body)}
        assert len(linked) == len(names), edits
