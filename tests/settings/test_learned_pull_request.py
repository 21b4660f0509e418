"""The repository's settings page: a maintainer's approval of a learned rule opens, as the App, the
pull request that adds it to REVIEW.md, once; the page links it, or says why it failed with a
button to try again; the approval holds whatever GitHub answers; a writer opens nothing. An
approved rule edited on the page updates its open pull request; the page shows a merged one
merged, and one closed without merging as closed, with a button that opens a new one, once."""
from __future__ import annotations

import pytest

from bot import db as bot_db
from bot.review import learned, learned_pr
from tests.entry_settings import current
from tests.settings.app_github import APP_ID, AppGitHub
from tests.settings.conftest import csrf_of, sign_in, use_fake_github
from tests.settings.test_learned_page import PAGE, a_candidate, decide
from tests.spine.helpers import app_key

REPO = "octo/app"
KEY, PUBLIC = app_key()


@pytest.fixture
def github(monkeypatch):
    """The settings pages' GitHub, which is also the App's (its token minted there)."""
    monkeypatch.setenv("GITHUB_APP_ID", APP_ID)
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", KEY)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "whsec")
    with AppGitHub(PUBLIC) as fake:
        use_fake_github(fake, monkeypatch)
        fake.rest.add_repo(REPO)
        yield fake


def maintainer_signed_in(client, github, role: str = "maintain") -> None:
    github.add_repo(REPO, octocat=role)
    github.rest.set_permission(REPO, "octocat", role)
    sign_in(client, github)


def approved_rule() -> learned.Learned:
    [rule] = learned.approved(bot_db.connect(settings=current()), REPO)
    return rule


def retry(client, rule_id: int):
    return client.post(f"{PAGE}/learned/pull-request", data={"csrf": csrf_of(client), "id": str(rule_id)})


def test_approving_a_rule_opens_one_pull_request_adding_it_to_review_md(client, github):
    maintainer_signed_in(client, github)
    github.rest.add_content(REPO, "REVIEW.md", b"# Review\n")
    candidate = a_candidate()
    assert decide(client, candidate, "approve", folder="").status_code == 303
    rule = approved_rule()
    [pull] = github.rest.pulls(REPO)
    assert pull["head"]["ref"] == learned_pr.branch(rule) and rule.pull_request == pull["html_url"]
    assert github.rest.file_on(REPO, pull["head"]["ref"], "REVIEW.md") == learned_pr.file_text("# Review\n", rule)


def test_a_folder_rules_approval_writes_the_folders_review_md(client, github):
    maintainer_signed_in(client, github)
    decide(client, a_candidate(), "approve", folder="tests")
    rule = approved_rule()
    assert str(learned_pr.line(rule)) in github.rest.file_on(REPO, str(learned_pr.branch(rule)), "tests/REVIEW.md")


def test_the_page_links_an_approved_rules_pull_request(client, github):
    maintainer_signed_in(client, github)
    decide(client, a_candidate(), "approve")
    [pull] = github.rest.pulls(REPO)
    assert f'<a href="{pull["html_url"]}" rel="noreferrer">#{pull["number"]}</a>' in client.get(PAGE).text


def test_a_second_approval_and_a_retry_open_no_second_pull_request(client, github):
    maintainer_signed_in(client, github)
    candidate = a_candidate()
    decide(client, candidate, "approve")
    decide(client, candidate, "approve")
    assert retry(client, candidate.id).status_code == 303
    assert len(github.rest.pulls(REPO)) == 1 and len(github.rest.calls_to("POST", r"/pulls$")) == 1


def test_github_failing_keeps_the_approval_and_shows_why_with_a_retry_that_opens_it(client, github):
    maintainer_signed_in(client, github)
    github.rest.fail_next("PUT", r"/contents/", status=403, body={"message": "Resource not accessible by integration"})
    candidate = a_candidate()
    assert decide(client, candidate, "approve").status_code == 303
    assert approved_rule().pull_request is None
    page = client.get(PAGE).text
    assert "Resource not accessible by integration" in page and f"{PAGE}/learned/pull-request" in page
    assert retry(client, candidate.id).headers["location"] == f"{PAGE}?learned=retried"
    assert approved_rule().pull_request == github.rest.pulls(REPO)[0]["html_url"]


def test_a_writer_can_neither_approve_nor_retry_and_nothing_reaches_github(client, github):
    maintainer_signed_in(client, github, role="write")
    candidate = a_candidate()
    assert decide(client, candidate, "approve").status_code == 403
    assert retry(client, candidate.id).status_code == 403
    assert [c for c in github.rest.calls if c.method != "GET"] == []


def test_saving_an_approved_rules_new_wording_updates_its_open_pull_request(client, github):
    maintainer_signed_in(client, github)
    candidate = a_candidate()
    decide(client, candidate, "approve")
    assert 'value="approve">Save</button>' in client.get(PAGE).text
    assert decide(client, candidate, "approve", wording="Docstrings are optional in tests.").status_code == 303
    rule = approved_rule()
    [pull] = github.rest.pulls(REPO)
    assert pull["title"] == learned_pr.title(rule)
    assert github.rest.file_on(REPO, pull["head"]["ref"], learned_pr.file_path(rule)) == learned_pr.file_text("", rule)


def test_a_merged_pull_request_is_shown_merged(client, github):
    maintainer_signed_in(client, github)
    decide(client, a_candidate(), "approve")
    [pull] = github.rest.pulls(REPO)
    github.rest.merge_pull(REPO, pull["number"])
    page = client.get(PAGE).text
    assert f'>#{pull["number"]}</a> merged' in page and "Try again" not in page


def test_a_pull_request_closed_unmerged_is_shown_closed_and_try_again_opens_a_new_one_once(client, github):
    maintainer_signed_in(client, github)
    candidate = a_candidate()
    decide(client, candidate, "approve")
    [first] = github.rest.pulls(REPO)
    github.rest.close_pull(REPO, first["number"])
    page = client.get(PAGE).text
    assert f'>#{first["number"]}</a> was closed without merging' in page and "Try again" in page
    retry(client, candidate.id)
    retry(client, candidate.id)
    pulls = github.rest.pulls(REPO)
    assert len(pulls) == 2 and pulls[1]["state"] == "open" and approved_rule().pull_request == pulls[1]["html_url"]
    assert "was closed without merging" not in client.get(PAGE).text
