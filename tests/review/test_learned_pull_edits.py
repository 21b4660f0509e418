"""bot/review/learned_pull.py when the rule changes after its pull request exists: re-approved with
new wording (or another folder) while the pull request is open, its line on the branch is replaced
and the pull request retitled; once merged, a new pull request carries the edit; closed without
merging, it no longer counts, and asking again opens a new one, once. The recorded pull request's
state is read from GitHub through an allowlist (hypothesis). On SQLite and PostgreSQL."""
from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.github.client import RetryingAPI, TokenCache
from bot.review import learned, learned_pr, learned_pull
from bot.review.learned import Learned
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.review.test_learned_pull import EXISTING, KEY, PUBLIC, REPO, approved, branch, opened
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")


@pytest.fixture
def gh():
    with FakeGitHub(app_id="4242", public_key=PUBLIC) as fake:
        fake.add_repo(REPO)
        fake.set_permission(REPO, "maint", "maintain")
        yield fake


def reapproved(db, rule: Learned, wording: str, folder: str | None = None) -> Learned:
    edited = learned.decide(db, REPO, rule.id, learned.APPROVE, "maint", wording=wording,
                            folder=rule.folder if folder is None else folder)
    assert edited is not None
    return edited


def asked(gh) -> list:
    """Every call but minting the installation token (each `opened` mints one)."""
    return [c for c in gh.calls if not c.path.endswith("/access_tokens")]


def recorded(db) -> Learned:
    [rule] = learned.approved(db, REPO)
    return rule


def test_new_wording_replaces_the_line_on_the_open_pull_requests_branch_and_retitles_it(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", EXISTING.encode())
    rule = approved(db)
    opened(gh, db, rule)
    edited = reapproved(db, rule, "Docstrings are optional in tests.")
    outcome = opened(gh, db, edited)
    [pull] = gh.pulls(REPO)
    assert outcome.url == pull["html_url"] and len(gh.calls_to("POST", r"/pulls$")) == 1
    assert gh.file_on(REPO, branch(rule), "REVIEW.md") == learned_pr.file_text(EXISTING, edited)
    assert pull["title"] == learned_pr.title(edited) and pull["body"] == learned_pr.body(edited, "https://github.com")
    assert recorded(db).pull_request_line == str(learned_pr.line(edited))


def test_an_edit_asked_twice_writes_once(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    opened(gh, db, rule)
    edited = reapproved(db, rule, "Docstrings are optional in tests.")
    opened(gh, db, edited)
    calls = len(asked(gh))
    opened(gh, db, edited)
    assert len(asked(gh)) == calls and len(gh.calls_to("PUT", r"/contents/")) == 2


def test_a_new_folder_moves_the_line_within_the_open_pull_request(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", EXISTING.encode())
    rule = approved(db)
    opened(gh, db, rule)
    moved = reapproved(db, rule, rule.wording, folder="tests")
    opened(gh, db, moved)
    assert gh.file_on(REPO, branch(rule), "REVIEW.md") == EXISTING
    assert gh.file_on(REPO, branch(rule), "tests/REVIEW.md") == learned_pr.file_text("", moved)
    assert recorded(db).pull_request_path == "tests/REVIEW.md"


def test_a_review_md_the_bot_made_for_a_rule_that_moved_is_deleted(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db, folder="tests")
    opened(gh, db, rule)
    opened(gh, db, reapproved(db, rule, rule.wording, folder="src"))
    assert gh.file_on(REPO, branch(rule), "tests/REVIEW.md") is None
    assert str(learned_pr.line(rule)) in (gh.file_on(REPO, branch(rule), "src/REVIEW.md") or "")


def test_an_edit_after_the_pull_request_merged_opens_a_new_one_replacing_the_merged_line(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", EXISTING.encode())
    rule = approved(db)
    opened(gh, db, rule)
    [first] = gh.pulls(REPO)
    gh.merge_pull(REPO, first["number"])
    edited = reapproved(db, rule, "Docstrings are optional in tests.")
    outcome = opened(gh, db, edited)
    second = gh.pulls(REPO)[-1]
    assert second["number"] != first["number"] and outcome.url == second["html_url"]
    assert gh.file_on(REPO, second["head"]["ref"], "REVIEW.md") == learned_pr.file_text(EXISTING, edited)
    assert gh.file_on(REPO, "main", "REVIEW.md") == learned_pr.file_text(EXISTING, rule)  # the merged one
    assert (recorded(db).pull_request_number, recorded(db).pull_request_state) == (second["number"], "open")


def test_a_merged_pull_request_with_the_rule_as_it_is_is_done(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    opened(gh, db, rule)
    gh.merge_pull(REPO, gh.pulls(REPO)[0]["number"])
    learned.record_pull_state(db, rule.id, learned.MERGED)
    calls = len(asked(gh))
    assert opened(gh, db, rule).url == gh.pulls(REPO)[0]["html_url"] and len(asked(gh)) == calls


def test_a_closed_unmerged_pull_request_no_longer_counts_and_asking_again_opens_a_new_one_once(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    opened(gh, db, rule)
    [first] = gh.pulls(REPO)
    gh.close_pull(REPO, first["number"])
    assert refreshed(gh, db) == 1
    assert not recorded(db).recorded and recorded(db).pull_request_state == learned.CLOSED
    again, twice = opened(gh, db, rule), opened(gh, db, rule)
    new = gh.pulls(REPO)[-1]
    assert again.url == twice.url == new["html_url"] and new["number"] != first["number"] and new["state"] == "open"
    assert len(gh.calls_to("POST", r"/pulls$")) == 2
    assert gh.file_on(REPO, new["head"]["ref"], "REVIEW.md").count(str(learned_pr.line(rule))) == 1


def test_an_open_pull_request_whose_branch_is_not_the_bots_is_not_written_to(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    gh.add_pull(REPO, 9, head_ref="someone/else", base_ref="main")
    learned.record_pull_request(db, rule.id, 9, f"https://github.com/{REPO}/pull/9", "REVIEW.md", "- x")
    outcome = opened(gh, db, reapproved(db, rule, "Other words."))
    assert "not on the bot's branch" in (outcome.failure or "") and gh.calls_to("PUT", r"/contents/") == []


def refreshed(gh, db) -> int:
    async def go() -> int:
        async with httpx.AsyncClient(timeout=10) as client:
            token = await TokenCache(lambda: ("4242", KEY), gh.url).token(client, 1)
            return await learned_pull.refresh(db, RetryingAPI(client, oauth_token=token, base_url=gh.url), REPO)
    return asyncio.run(go())


ANSWERS = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=30),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                   max_size=4), max_leaves=12)
SHAPED = st.fixed_dictionaries({"number": st.sampled_from([4, 5, "4"]), "state": st.sampled_from(
    ["open", "closed", "merged", "OPEN", None]), "merged": st.sampled_from([True, False, None, "true"]),
    "head": st.fixed_dictionaries({"ref": st.sampled_from(["bot/review-rules/learned-7", "main", 7]),
                                   "repo": st.one_of(st.none(), st.fixed_dictionaries(
                                       {"full_name": st.sampled_from([REPO, "fork/app"])}))})})


@settings(max_examples=300, deadline=None)
@given(st.one_of(ANSWERS, SHAPED))
def test_only_a_pull_requests_documented_state_is_read(answer):
    state = learned_pull.pull_state(answer, REPO, 4)
    if state is None:
        return
    assert isinstance(answer, dict) and answer["number"] == 4 and answer["state"] in ("open", "closed")
    assert isinstance(answer["merged"], bool) and not (answer["merged"] and answer["state"] == "open")
    assert state.state == (learned.MERGED if answer["merged"] is True else
                           learned.OPEN if answer["state"] == "open" else learned.CLOSED)
    assert state.branch is None or (answer["head"]["ref"] == state.branch
                                    and answer["head"]["repo"]["full_name"] == REPO)
