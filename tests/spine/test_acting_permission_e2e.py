"""Acting on a thread needs GitHub's permission at run time, through a real `bot serve` and the
real Codex CLI: the payload's author_association only gets a command past the intake.

The long step is a bridged `run` the fake provider scripts, a sleep; the test knows the episode is
mid-run once the run's record holds that tool call (the sandbox writes files back only when the
command ends, so a file it touches is no signal).
"""
from __future__ import annotations

import re
import subprocess

import pytest

from bot.service import store
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, call, say
from tests.spine.helpers import payload
from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
MARKER = re.compile(r"<!-- bot:run (\{.*?\}) -->")
SLOW = "sleep 20"
SHORT = "sleep 3"  # long enough for the test to revoke the permission mid-run


@pytest.fixture
def world(tmp_path, monkeypatch):
    gh = seeded_github()
    gh.set_permission(REPO, "reader", "read")
    gh.set_permission(REPO, "alice", "write")
    remotes = make_remote(tmp_path)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    with FakeProvider() as provider:
        service = Service(service_env(tmp_path, gh, remotes, provider.url), tmp_path / "serve.log").start()
        try:
            yield gh, provider, service, remotes
        finally:
            service.stop()
            gh.stop()


def mention(gh, body: str, comment_id: int, user: str = "Codertocat", association: str = "OWNER") -> dict:
    gh.add_comment(REPO, 1, body, user=user, comment_id=comment_id)
    data = payload("issue_comment.created", body, id=comment_id, author_association=association)
    data["comment"]["user"]["login"] = user
    return data


def start_waiting_episode(world, *before, command: str = SLOW) -> None:
    """Codertocat (admin) starts an episode and the test waits until it is mid-run."""
    gh, provider, service, _ = world
    provider.script(*before, call("run", {"command": command}), say("Done."))
    assert service.deliver(mention(gh, "@bot codex run the waiting check", 1)).status_code == 202
    gh.wait_for(running_tool_call, timeout=120)


def running_tool_call() -> bool:
    """The episode's record holds the bridged `run` it is in."""
    return bool(store.connect(settings=current()).query("SELECT 1 FROM run_events WHERE kind = 'tool_use' AND tool LIKE '%run'"))


def bot_comments(gh) -> list[str]:
    return [c["body"] or "" for c in gh.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"]


def episode() -> dict:
    return next(j for j in store.jobs(store.connect(settings=current())) if j["kind"] == "episode")


def test_a_read_only_members_stop_leaves_the_writers_run_and_says_they_lack_permission(world):
    """An organisation member (association MEMBER) with read permission says `@bot stop`: the
    writer's episode is not cancelled, and the reply tells the member they may not stop it."""
    gh, _, service, _ = world
    start_waiting_episode(world)
    service.deliver(mention(gh, "@bot stop", 2, user="reader", association="MEMBER"))
    refusal = gh.wait_for(lambda: [b for b in bot_comments(gh) if "only people with" in b], timeout=60)[0]
    assert "@reader" in refusal and "`stop`" in refusal and "nothing was done" in refusal
    assert (episode()["status"], episode()["cancel_requested"]) == ("running", 0)
    gh.wait_for(lambda: episode()["status"] == "done", timeout=120)
    answer = next(b for b in bot_comments(gh) if MARKER.search(b))
    assert "Stopped" not in answer


def test_a_writers_stop_is_recorded_and_announced_with_their_login(world):
    """alice (write) stops Codertocat's episode: the job records her, and the thread is told she
    stopped it, not that its requester did."""
    gh, _, service, _ = world
    start_waiting_episode(world)
    service.deliver(mention(gh, "@bot stop", 2, user="alice", association="COLLABORATOR"))
    stopped = gh.wait_for(lambda: [b for b in bot_comments(gh) if "Stopped" in b], timeout=60)[0]
    assert "Stopped by @alice" in stopped and "Codertocat" not in stopped.split("\n")[0]
    gh.wait_for(lambda: episode()["status"] == "cancelled", timeout=60)
    assert episode()["stopped_by"] == "alice"
    assert {"subject": "issue_comment", "comment_id": 2, "content": "+1"} in gh.reactions


def test_a_writer_revoked_mid_run_gets_no_push_and_no_pull_request(world):
    """Codertocat's permission drops to read while the agent works: the re-check right before
    the effects asks GitHub anew (not the permission cache), so nothing is pushed or opened."""
    gh, _, _, remotes = world
    start_waiting_episode(world, call("save_file", {"path": "NOTES.md", "content": "Spelling fixed.\n"}),
                          command=SHORT)
    gh.set_permission(REPO, "Codertocat", "read")
    answer = gh.wait_for(lambda: [b for b in bot_comments(gh) if MARKER.search(b)], timeout=120)[0]
    assert "no longer has" in answer and "nothing was published" in answer
    branches = subprocess.run(["git", "-C", str(remotes / f"{REPO}.git"), "for-each-ref", "--format=%(refname)",
                               "refs/heads/bot"], capture_output=True, text=True, check=True).stdout
    assert branches == "" and [p["number"] for p in gh.pulls(REPO)] == [2]
