"""End to end through `bot serve` (both profiles) with the real Codex CLI against the fake provider
and the fake GitHub: a Dependabot alert created runs the automation declared for it in that
automation's own issue, the alert's fields fenced as untrusted input, and with
`may: [draft_pull_request]` the agent's change goes to a new branch and a DRAFT pull request that
links the automation's issue without closing it; a redelivered alert runs nothing more."""
from __future__ import annotations

import pytest

from tests.automations import payloads
from tests.automations.test_triage_e2e import finished
from tests.fakes.provider import call, say
from tests.review.world import BASE_APP, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
DECLARED = (b"automations:\n  - name: deps-fix\n    on:\n      dependabot_alert: {}\n    agent: codex\n"
            b"    prompt: Fix the vulnerable dependency.\n    may: [draft_pull_request]\n")


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path) as opened:
        opened.gh.add_content(REPO, ".github/bot.yml", DECLARED)
        yield opened


def automation_issues(world) -> list[int]:
    """The bot renders "fix" in a title inert (a zero-width space: no closing keyword)."""
    return [n for n, issue in world.gh.issues(REPO).items()
            if issue["title"].replace("\u200b", "") == "Automation: deps-fix"]


def answers(world) -> list[str]:
    return [c["body"] for n in automation_issues(world) for c in world.gh.comments(REPO, n)
            if "<!-- bot:run " in (c.get("body") or "")]


@scenario
def test_a_dependabot_alert_opens_a_draft_pull_request_from_the_automations_issue(world):
    world.providers["codex"].script(call("save_file", {"path": "app.py", "content": BASE_APP + "\n# patched\n"}),
                                    say("Bumped the dependency."))
    data = payloads.dependabot_alert()
    data["repository"]["full_name"] = REPO
    assert world.service.deliver(data, event="dependabot_alert").status_code == 202
    [answer] = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "Bumped the dependency." in answer
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert "Fix the vulnerable dependency." in asked and "untrusted input" in asked
    assert "package: lodash\n" in asked and "GHSA id: GHSA-p6mc-m468-83gw" in asked
    [pull] = world.gh.pulls(REPO)[-1:]
    assert pull["draft"] is True and pull["head"]["ref"].startswith("bot/codex/")
    assert f"Refs #{automation_issues(world)[0]}" in pull["body"] and "Fixes" not in pull["body"]
    assert world.service.deliver(data, event="dependabot_alert").json()["queued"] is False
    world.gh.wait_for(lambda: [row["status"] for row in finished(world)] == ["done", "done"],  # the alert's job,
                      timeout=60)                                                        # and its automation's run
