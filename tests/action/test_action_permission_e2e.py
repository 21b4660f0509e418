"""The Action acts only with GitHub's permission at run time, like the service: the requester's
permission is asked again right before the push and the pull request, so a writer revoked while
the agent works gets nothing published (real `bot action`, the real Codex CLI, the fake GitHub)."""
from __future__ import annotations

import subprocess
import threading

import pytest

from bot.service import store
from tests.action.conftest import REPO, payload
from tests.action.test_action_e2e import run_step
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call, say
from tests.spine.service import make_remote

pytestmark = pytest.mark.e2e
SHORT = "sleep 3"  # long enough for the test to revoke the permission mid-run


@pytest.fixture
def provider():
    with FakeProvider() as fake:
        yield fake


def running_tool_call() -> bool:
    """The step's record holds the bridged `run` its agent is in (the mid-run signal)."""
    return bool(store.connect(settings=current()).query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"))


def test_a_writer_revoked_mid_run_gets_no_push_from_the_action(github, runner, provider, tmp_path):
    github.set_permission(REPO, "Codertocat", "admin")
    provider.script(call("save_file", {"path": "NOTES.md", "content": "Spelling fixed.\n"}),
                    call("run", {"command": SHORT}), say("Fixed it."))
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex fix the spelling",
                                          id=github.add_comment(REPO, 1, "@bot codex", user="Codertocat")["id"]))
    remotes = make_remote(tmp_path)
    steps: list[subprocess.CompletedProcess] = []
    step = threading.Thread(target=lambda: steps.append(run_step(runner, github, provider, remotes)))
    step.start()
    github.wait_for(lambda: running_tool_call() or not step.is_alive(), timeout=240)
    github.set_permission(REPO, "Codertocat", "read")
    step.join()
    answer = runner.outputs()["answer"]
    assert "no longer has" in answer and "nothing was published" in answer, steps[0].stdout + steps[0].stderr
    branches = subprocess.run(["git", "-C", str(remotes / f"{REPO}.git"), "for-each-ref", "--format=%(refname)",
                               "refs/heads/bot"], capture_output=True, text=True, check=True).stdout
    assert branches == "" and github.calls_to("POST", r"/pulls$") == []
