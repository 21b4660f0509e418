"""`bot serve` says what came of every job: one log line per outcome (answered, failed, stopped, no
credentials) with the job, its thread and the time taken, read from the real service's log."""
from __future__ import annotations

import contextlib
import re

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call, fail, say
from tests.spine.helpers import payload
from tests.spine.service import REPO, make_remote, seeded_github, service_env, serving

pytestmark = pytest.mark.e2e


def outcome_line(gh, service, words: str) -> str:
    """Waits for the job's outcome line in the service's log and returns it."""
    pattern = re.compile(rf"job \d+ for {re.escape(REPO)}#1 {words} in \d+\.\d s")

    def found() -> str | None:
        return next((line for line in service.log_path.read_text().splitlines() if pattern.search(line)), None)

    return gh.wait_for(found, timeout=120)


def mention(gh, service, body: str, comment_id: int = 1) -> None:
    gh.add_comment(REPO, 1, body, user="Codertocat", comment_id=comment_id)
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    assert service.deliver(data).status_code == 202


@pytest.fixture
def world(tmp_path):
    """Starts `bot serve` with the provider's scripted turns and extra environment."""
    with contextlib.ExitStack() as stack:
        def start(script: tuple = (), **extra: str):
            gh = seeded_github()
            provider = stack.enter_context(FakeProvider())
            provider.script(*script)
            env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, **extra)
            return gh, stack.enter_context(serving(gh, env, tmp_path / "serve.log"))

        yield start


def test_an_answered_job_is_logged_with_its_thread_and_time(world):
    gh, service = world((say("hello there"),))
    mention(gh, service, "@bot codex say hello")
    assert " INFO bot.service.worker: job " in outcome_line(gh, service, "answered")


def test_a_failed_job_is_logged_as_failed(world):
    gh, service = world((fail(401, "Incorrect API key provided"),))
    mention(gh, service, "@bot codex say hello")
    assert " WARNING bot.service.worker: job " in outcome_line(gh, service, "failed")


def test_a_job_without_credentials_is_logged_as_such(world):
    gh, service = world(OPENAI_API_KEY="")
    mention(gh, service, "@bot codex say hello")
    outcome_line(gh, service, "ended with no credentials")


def test_a_help_reply_is_logged_as_answered(world):
    gh, service = world()
    mention(gh, service, "@bot help")
    outcome_line(gh, service, "answered")



def test_a_stopped_job_is_logged_with_who_stopped_it(world, tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))  # the service's database, read here
    gh, service = world((call("run", {"command": "sleep 20"}),))
    mention(gh, service, "@bot codex run the slow check")
    gh.wait_for(lambda: store.connect(settings=current()).query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"),
                timeout=120)
    mention(gh, service, "@bot stop", comment_id=2)
    assert " INFO bot.service.worker: job " in outcome_line(gh, service, "stopped by @Codertocat")
