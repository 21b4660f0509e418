"""What `may:` grants an automation's run beyond its answer: a labeler bound to the run's thread
only with `label`, and with `review` on a pull request the same review command `@bot review` makes,
posted without asking anyone's permission again (a command's review asks its requester's)."""
from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest

from bot.automations import event_run
from bot.automations.labels import RepoLabels
from bot.automations.mode import AutomationMode, draft_title, reviews, run_as
from bot.config import Settings
from bot.github.client import RetryingAPI, Thread
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job.modes import GitHubMode
from bot.job.start import context_for
from bot.workspace.repo_config import RepoConfig, parse
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
YML = ("automations:\n  - name: look\n    on:\n      {on}\n    agent: codex\n    prompt: Look for bugs.\n"
       "    may: {may}\n")
SPEC = JobSpec(repo=REPO, number=2, author="outsider", is_pr=True, title="Change", command=Command(kind="run"))


def automation(on: str = "pull_request: {types: [opened]}", may: str = "[review]"):
    return parse(YML.format(on=on, may=may), ".github/bot.yml").automations[0]


@pytest.fixture
def gh():
    fake = FakeGitHub(require_auth=False).start()
    fake.add_repo(REPO)
    fake.add_pull(REPO, 2)
    fake.set_permission(REPO, "outsider", "read")
    yield fake
    fake.stop()


@pytest.fixture
async def thread(gh):
    async with httpx.AsyncClient() as client:
        yield Thread(RetryingAPI(client, oauth_token="t", base_url=gh.url), REPO, 2)


def test_review_in_may_on_a_pull_request_event_makes_the_run_the_review_command_focused_by_the_prompt():
    look = automation()
    assert reviews(look, "pull_request")
    command = event_run._spec_for(SPEC, look, "the event's text", review=True).command
    assert (command.review, command.agent, command.agents, command.request) == (True, "codex", ("codex",),
                                                                                "Look for bugs.")


@pytest.mark.parametrize("event", ["issues", "issue_comment", "check_suite", "schedule"])
def test_review_on_any_other_event_is_no_review(event):
    assert not reviews(automation(), event)


def test_an_automation_without_review_is_no_review_on_a_pull_request():
    assert not reviews(automation(may="[comment]"), "pull_request")


async def test_a_commands_review_asks_the_requesters_permission_again_before_it_is_posted(thread):
    ctx = SimpleNamespace(requester="outsider")
    refused = await GitHubMode(thread).still_allowed(ctx, RepoConfig())()
    assert refused is not None and "@outsider no longer has" in refused


async def test_an_automations_review_is_posted_on_its_may_without_asking_the_events_author(thread, gh):
    ctx = SimpleNamespace(requester="outsider")
    assert await AutomationMode(thread, automation=automation()).still_allowed(ctx, RepoConfig())() is None
    assert gh.calls_to("GET", r"/collaborators/") == []


def _context(thread):
    return context_for(SPEC, thread, object(), settings=Settings({}))


async def test_a_run_whose_automation_may_label_gets_a_labeler_bound_to_its_thread(thread):
    ctx = run_as(_context(thread), automation(may="[comment, label]"))
    assert isinstance(ctx.labels, RepoLabels) and ctx.labels.thread is thread


async def test_a_run_whose_automation_may_not_label_gets_no_labeler(thread):
    ctx = run_as(_context(thread), automation(may="[comment, review]"))
    assert ctx.labels is None and _context(thread).labels is None


def test_a_queued_runs_draft_is_named_for_its_job():
    assert draft_title("deps", 12, "9bd808baba8346488ce57e94ce7b19b6") == "deps job 12"


def test_a_draft_nothing_queued_is_named_for_its_own_run_not_job_0():
    """The Action (`bot action`) runs an automation without a queued job: its draft's title and
    branch name carry the run's id, which its answer's footer shows, never a job 0 that does not exist."""
    assert draft_title("deps", None, "9bd808baba8346488ce57e94ce7b19b6") == "deps run 9bd808ba"
