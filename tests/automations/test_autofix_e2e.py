"""End to end through `bot serve` with the real Codex CLI against the fake provider and the fake
GitHub: a failing check suite of a same-repository pull request is fixed by a commit the bot pushes
to its branch; a fork's failing check suite (GitHub names no pull request) is answered in the fork's
pull request with the change as a diff and nothing pushed; the bot's own check suite and the bot's
own push start nothing."""
from __future__ import annotations

import subprocess

import pytest

from tests.automations import payloads
from tests.automations.test_triage_e2e import finished
from tests.fakes.provider import call, say
from tests.review.world import BASE_APP, PR, _git
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
FIX_CI = (b"automations:\n  - name: fix-ci\n    on:\n      check_suite: {conclusion: [failure]}\n    agent: codex\n"
          b"    prompt: Fix the failing checks of this pull request.\n    may: [comment, push]\n")
FORK_PR = 3


def remote(world):
    return world.tmp / "remotes" / f"{REPO}.git"


def failing(world, number: int, head: str) -> None:
    """The pull request's head in the fake GitHub is the real head, and a test job failed on it."""
    with world.gh._lock:
        world.gh._state(REPO)["pulls"][number]["head"]["sha"] = head
    world.gh.add_check_run(REPO, head, "test", conclusion="failure", log="FAILED test_add: add(1, 2) == -1\n")


def answers(world, number: int) -> list[str]:
    return [c["body"] for c in world.gh.comments(REPO, number) if "<!-- bot:run " in (c.get("body") or "")]


def fixed(world) -> None:
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    world.providers["codex"].script(call("save_file", {"path": "app.py", "content": BASE_APP}), say("Fixed add()."))


@scenario
def test_a_failing_check_of_a_same_repository_pull_request_is_fixed_by_a_pushed_commit(world):
    head = world.head()
    failing(world, PR, head)
    fixed(world)
    assert world.service.deliver(payloads.check_suite(head=head), event="check_suite").json()["queued"] is True
    found = world.gh.wait_for(lambda: answers(world, PR), timeout=180)
    assert "Fixed add()." in found[0]
    pushed = _git(remote(world), "rev-parse", "refs/heads/changes").strip()
    assert pushed != head and _git(remote(world), "rev-parse", f"{pushed}^").strip() == head
    assert _git(remote(world), "show", f"{pushed}:app.py") == BASE_APP
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert "Fix the failing checks of this pull request." in asked and "read_thread" in asked
    kinds = [r["kind"] for r in world.service.database().query("SELECT kind FROM automation_runs ORDER BY slot")]
    assert sorted(kinds) == ["attempt", "pushed", "run"]


@scenario
def test_a_forks_failing_check_is_answered_with_the_change_as_a_diff_and_nothing_pushed(world):
    head = world.head()
    subprocess.run(["git", "-C", str(world.tmp / "seed"), "push", "-q", str(remote(world)),
                    f"HEAD:refs/pull/{FORK_PR}/head"], check=True)
    world.gh.add_pull(REPO, FORK_PR, head_ref="patch-1", head_sha=head, head_repo="someone/Hello-World",
                      maintainer_can_modify=True, title="A fork's change", user="someone")
    with world.gh._lock:  # only the fork's pull request has this head
        world.gh._state(REPO)["pulls"][PR]["head"]["sha"] = "f" * 40
    world.gh.add_check_run(REPO, head, "test", conclusion="failure", log="FAILED test_add\n")
    fixed(world)
    before = _git(remote(world), "for-each-ref").strip()
    assert world.service.deliver(payloads.check_suite(head=head, pulls=()), event="check_suite").status_code == 202
    found = world.gh.wait_for(lambda: answers(world, FORK_PR), timeout=180)
    assert "an automation never pushes to a fork's branch" in found[0] and "```diff" in found[0]
    assert _git(remote(world), "for-each-ref").strip() == before
    assert answers(world, PR) == []


def test_a_check_suite_of_the_bots_own_app_starts_nothing(world):
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    reply = world.service.deliver(payloads.check_suite(app="bot"), event="check_suite")
    assert reply.json()["queued"] is False


def test_the_bots_own_push_to_a_pull_request_starts_nothing(world):
    world.gh.add_content(REPO, ".github/bot.yml", FIX_CI)
    reply = world.service.deliver(payloads.pull_request("synchronize", sender="bot[bot]"), event="pull_request")
    assert reply.json()["queued"] is False
    assert world.service.database().query("SELECT id FROM jobs") == []


def test_a_check_suite_whose_head_no_open_pull_request_has_runs_nothing_and_is_recorded(world):
    fixed(world)
    world.service.deliver(payloads.check_suite(head="e" * 40, pulls=()), event="check_suite")
    assert [row["status"] for row in finished(world)] == ["done"]
    rows = world.service.database().query("SELECT kind, outcome FROM automation_runs")
    assert rows == [{"kind": "skipped", "outcome": f"no open pull request of {REPO} has the head eeeeeee"}]
    assert world.providers["codex"].requests == []
