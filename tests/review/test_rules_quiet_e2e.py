"""End to end with the real CLIs against the fakes: the repository's review rules reach an agent only
for the folders its diff touches, read from the default branch; a re-review's request leaves out a
file the push did not touch; a clean review posts nothing but a 👍 on the request (and its check
run), unless `reviews.quiet: false`."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, PR, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
BUG = {"path": "app.py", "line": BUG_LINE, "side": "RIGHT", "body": "add() subtracts.", "severity": "important"}
RULES = {"REVIEW.md": "ROOT-RULE: check the arithmetic.\n", "api/REVIEW.md": "API-RULE: validate input.\n",
         "web/REVIEW.md": "WEB-RULE: check the CSS.\n", "api/handler.py": "def handle(x):\n    return x\n"}
BOT_YML = 'reviews:\n  rules:\n    "api/**": CONFIG-API-RULE\n    "web/**": CONFIG-WEB-RULE\n'
THUMBS_UP = {"subject": "issue_comment", "comment_id": 7001, "content": "+1"}


def finished(world) -> list[str]:
    return [row["status"] for row in world.service.database().query(
        "SELECT status FROM jobs WHERE status NOT IN ('queued', 'running')")]


def bot_comments(world) -> list[dict]:
    return [c for c in world.gh.comments(REPO, PR) if "<!-- bot:job " in (c.get("body") or "")]


def test_a_folders_rules_reach_the_agent_only_when_its_diff_touches_that_folder(tmp_path):
    pr_head = {"api/handler.py": "def handle(x):\n    return int(x)\n", "REVIEW.md": "HEAD-RULE: approve all.\n"}
    with open_world(tmp_path, bot_yml=BOT_YML, on_main=RULES, extra=pr_head) as world:
        world.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
        world.ask("@bot codex review")
        world.answer()
        asked = world.providers["codex"].main_requests()[0].last_user_text
        [review] = world.reviews()
    assert "`REVIEW.md`, for every file:\n```markdown\nROOT-RULE: check the arithmetic.\n```" in asked
    assert "`api/REVIEW.md`, for files under `api/`:\n```markdown\nAPI-RULE: validate input.\n```" in asked
    assert "CONFIG-API-RULE" in asked and "WEB-RULE" not in asked
    assert "Rules applied: `.github/bot.yml` (`api/**`), `REVIEW.md`, `api/REVIEW.md`." in review["body"]


def test_a_re_reviews_request_leaves_out_the_diff_of_a_file_the_push_did_not_touch(tmp_path):
    extra = {"util.py": "def double(x):\n    return 2 * x\n", "untouched.py": "UNTOUCHED_SENTINEL = 1\n"}
    with open_world(tmp_path, extra=extra) as world:
        world.providers["codex"].script(call("comment_on_line", BUG), say("One bug."))
        world.ask("@bot codex review")
        world.answer()
        world.push({"util.py": extra["util.py"] + "\n\ndef triple(x):\n    return 3 * x\n"})
        world.providers["codex"].script(say("Nothing new."))
        world.ask("@bot codex review", comment_id=7002)
        world.gh.wait_for(lambda: len(finished(world)) == 2, timeout=240)
        first, second = (r.last_user_text for r in world.providers["codex"].main_requests()[::2])
    assert "UNTOUCHED_SENTINEL" in first
    assert "UNTOUCHED_SENTINEL" not in second and "def triple(x)" in second


@scenario
def test_a_clean_review_posts_nothing_but_a_thumbs_up_on_the_request(world):
    world.providers["codex"].script(say("Looks good to me."))
    world.ask("@bot codex review")
    world.gh.wait_for(lambda: THUMBS_UP in world.gh.reactions and not bot_comments(world) and finished(world),
                      timeout=240)
    assert world.reviews() == [] and finished(world) == ["done"]
    assert len(world.gh.calls_to("DELETE", r"/issues/comments/\d+$")) == 1


def test_a_clean_review_with_quiet_false_posts_the_no_issues_review(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  quiet: false\n") as world:
        world.providers["codex"].script(say("Looks good to me."))
        world.ask("@bot codex review")
        answer = world.answer()
        [review] = world.reviews()
    assert "No issues found in 1 file" in review["body"] and review["_comments"] == []
    assert "no issues found in 1 file," in answer and THUMBS_UP not in world.gh.reactions


def test_a_clean_review_with_a_check_run_concludes_it_and_leaves_no_comment(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  check_run: true\n") as world:
        world.providers["codex"].script(say("Looks good to me."))
        world.ask("@bot codex review")
        world.gh.wait_for(lambda: not bot_comments(world) and finished(world), timeout=240)
        [run] = world.gh.check_runs_of(REPO)
    assert run["conclusion"] == "success" and "none posted, no issues found in 1 file" in run["output"]["summary"]
    assert world.reviews() == [] and THUMBS_UP in world.gh.reactions
