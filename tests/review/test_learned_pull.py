"""bot/review/learned_pull.py: an approved learned rule's pull request, opened through the REST API
(the fake GitHub, held to GitHub's description) as the App: the rule's line added to the root's or
the folder's REVIEW.md on the rule's branch, one pull request however often it is asked, what
failed recorded on the rule, the file read back bounded. On SQLite and PostgreSQL (migration 12)."""
from __future__ import annotations

import asyncio

import httpx
import pytest

from bot import db as bot_db
from bot.github.client import RetryingAPI, TokenCache
from bot.review import learned, learned_pr, learned_pull, memory
from bot.review.learned import Learned
from bot.review.memory import Posted
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.spine.helpers import app_key
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")
REPO = "octo/app"
KEY, PUBLIC = app_key()
EXISTING = "# Review\n\nBe kind in reviews.\n"


@pytest.fixture
def gh():
    with FakeGitHub(app_id="4242", public_key=PUBLIC) as fake:
        fake.add_repo(REPO)
        fake.set_permission(REPO, "maint", "maintain")
        yield fake


def approved(db, folder: str = "") -> Learned:
    for number in (1, 2):
        memory.remember(db, REPO, number, ["codex"], "a" * 40, 9,
                        [Posted("codex", 70 + number, f"tests/test_{number}.py", 1, None, "RIGHT", "nit", "f",
                                "Missing docstring on this test function.")])
        [finding] = memory.findings(db, REPO, number)
        memory.mark(db, [finding.id], memory.DECLINED, "", via="reply")
    [candidate] = learned.propose(db, REPO)
    rule = learned.decide(db, REPO, candidate.id, learned.APPROVE, "maint", wording="No docstrings in tests.",
                          folder=folder)
    assert rule is not None
    return rule


def opened(gh: FakeGitHub, db, rule: Learned, asker: str = "maint") -> learned_pull.Outcome:
    async def go() -> learned_pull.Outcome:
        async with httpx.AsyncClient(timeout=10) as client:
            token = await TokenCache(lambda: ("4242", KEY), gh.url).token(client, 1)
            api = RetryingAPI(client, oauth_token=token, base_url=gh.url)
            return await learned_pull.open_pull_request(db, api, REPO, rule.id, asker, "https://github.com")
    return asyncio.run(go())


def branch(rule: Learned) -> str:
    return str(learned_pr.branch(rule))


def test_the_rules_line_is_appended_to_the_root_review_md_kept_as_it_was_and_one_pull_request_opens(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", EXISTING.encode())
    rule = approved(db)
    outcome = opened(gh, db, rule)
    assert gh.file_on(REPO, branch(rule), "REVIEW.md") == learned_pr.file_text(EXISTING, rule)
    assert gh.file_on(REPO, branch(rule), "REVIEW.md").startswith(EXISTING)
    assert gh.file_on(REPO, "main", "REVIEW.md") == EXISTING
    [pull] = gh.pulls(REPO)
    assert (pull["head"]["ref"], pull["base"]["ref"], pull["draft"]) == (branch(rule), "main", False)
    assert pull["title"] == learned_pr.title(rule) and pull["body"] == learned_pr.body(rule, "https://github.com")
    [recorded] = learned.approved(db, REPO)
    assert outcome.url == recorded.pull_request == pull["html_url"] and recorded.pull_request_number == pull["number"]


def test_a_folder_rule_makes_the_folders_review_md(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", EXISTING.encode())
    rule = approved(db, folder="tests")
    opened(gh, db, rule)
    assert gh.file_on(REPO, branch(rule), "tests/REVIEW.md") == f"## Learned rules\n{learned_pr.line(rule)}\n"
    assert gh.file_on(REPO, branch(rule), "REVIEW.md") == EXISTING


def test_a_rule_whose_pull_request_is_recorded_opens_no_second(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    first, again = opened(gh, db, rule), opened(gh, db, rule)
    assert first.url == again.url and len(gh.pulls(REPO)) == 1
    assert len(gh.calls_to("POST", r"/pulls$")) == 1 and len(gh.calls_to("PUT", r"/contents/")) == 1


def test_an_open_pull_request_from_the_rules_branch_is_recorded_not_opened_again(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    gh.add_branch(REPO, branch(rule))
    gh.add_pull(REPO, 5, head_ref=branch(rule), base_ref="main")  # opened before the bot stopped
    outcome = opened(gh, db, rule)
    assert outcome.url == f"https://github.com/{REPO}/pull/5" and gh.calls_to("POST", r"/pulls$") == []


def test_a_retry_reuses_the_branch_and_writes_the_rule_once(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    gh.fail_next("POST", r"/pulls$", status=403, body={"message": "Resource not accessible by integration"})
    assert "Resource not accessible by integration" in (opened(gh, db, rule).failure or "")
    assert opened(gh, db, rule).url is not None
    assert gh.file_on(REPO, branch(rule), "REVIEW.md").count(str(learned_pr.line(rule))) == 1
    assert len(gh.calls_to("PUT", r"/contents/")) == 1 and len(gh.pulls(REPO)) == 1


def test_github_failing_keeps_the_approval_and_records_why(gh):
    db = bot_db.connect(settings=current())
    rule = approved(db)
    gh.fail_next("PUT", r"/contents/", status=403, body={"message": "Resource not accessible by integration"})
    outcome = opened(gh, db, rule)
    [kept] = learned.approved(db, REPO)
    assert kept.pull_request is None and kept.pull_request_failure == outcome.failure
    assert "Resource not accessible by integration" in kept.pull_request_failure and gh.pulls(REPO) == []


def test_a_review_md_larger_than_reviews_read_is_refused_not_written(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "REVIEW.md", b"x" * (learned_pull.MAX_FILE_BYTES + 1))
    outcome = opened(gh, db, approved(db))
    assert "larger than 32 KiB" in (outcome.failure or "") and gh.calls_to("PUT", r"/contents/") == []


def test_a_symlinked_review_md_is_refused_not_written_through(gh):
    db = bot_db.connect(settings=current())
    gh.add_content(REPO, "docs/rules.md", b"# Rules\n")
    gh.add_symlink(REPO, "REVIEW.md", "docs/rules.md")
    outcome = opened(gh, db, approved(db))
    assert "symlink" in (outcome.failure or "") and gh.calls_to("PUT", r"/contents/") == []


def test_a_writer_asking_opens_nothing_whatever_the_page_checked(gh):
    db = bot_db.connect(settings=current())
    gh.set_permission(REPO, "wally", "write")
    outcome = opened(gh, db, approved(db), asker="wally")
    assert "only a maintainer" in (outcome.failure or "")
    assert [c.method for c in gh.calls if c.method in ("POST", "PUT") and "access_tokens" not in c.path] == []
