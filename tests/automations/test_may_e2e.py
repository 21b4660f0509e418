"""End to end through `bot serve` with the real Codex CLI against the fake provider and the fake
GitHub: `may: [label]` lets the triage recipe label a new issue through the bridge's add_labels tool
(only with the repository's own labels; without `label` the tool is not even offered), and
`may: [review]` on a pull request opened posts the same one review `@bot review` posts."""
from __future__ import annotations

import pytest

from tests.automations import payloads
from tests.automations.test_triage_e2e import answers, finished, opened
from tests.fakes.provider import call, say
from tests.review.world import BUG_LINE, PR
from tests.spine.helpers import payload
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
TRIAGE = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
          b"    prompt: Label the issue bug, feature or question, and ask for a reproduction when one is missing.\n"
          b"    may: [comment, label]\n")
REVIEW = (b"automations:\n  - name: review\n    on:\n      pull_request: {types: [opened]}\n    agent: codex\n"
          b"    prompt: Look for bugs in the arithmetic.\n    may: [review]\n")
FIX = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts: it must add.", "severity": "important"}


def labelled(world, *names: str) -> None:
    for name in names:
        world.gh.add_label(REPO, name)


def tool_calls(world, tool: str) -> list[dict]:
    return world.service.database().query("SELECT outcome FROM run_events WHERE kind = 'tool_call' AND tool = ?", [tool])


@scenario
def test_triage_labels_a_new_issue_with_a_label_the_repository_has(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    labelled(world, "bug", "feature", "question")
    world.providers["codex"].script(call("add_labels", {"labels": ["bug"]}),
                                    say("A bug: the README misspells Hello. Labelled bug."))
    assert world.service.deliver(opened(), event="issues").json()["queued"] is True
    found = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "Labelled bug." in found[0]
    assert world.gh.labels_on(REPO, 1) == ["bug"]
    assert "added bug" in (world.providers["codex"].main_requests()[1].tool_result or "")
    assert [row["outcome"] for row in tool_calls(world, "add_labels")] == ["ok"]


@scenario
def test_triage_asking_for_a_label_the_repository_lacks_is_refused_and_nothing_is_created(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    labelled(world, "bug", "feature", "question")
    world.providers["codex"].script(call("add_labels", {"labels": ["wontfix"]}), say("I could not label it."))
    world.service.deliver(opened(), event="issues")
    world.gh.wait_for(lambda: answers(world), timeout=180)
    refused = world.providers["codex"].main_requests()[1].tool_result or ""
    assert "'wontfix' is not a label of this repository" in refused and "bug, feature, question" in refused
    assert world.gh.labels_on(REPO, 1) == [] and world.gh.label_names(REPO) == ["bug", "feature", "question"]
    assert world.gh.calls_to("POST", r"/issues/\d+/labels$") == []
    assert [row["outcome"] for row in tool_calls(world, "add_labels")] == ["refused:unknown_label"]


def test_without_label_in_may_the_tool_is_not_offered(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE.replace(b"[comment, label]", b"[comment]"))
    labelled(world, "bug")
    world.providers["codex"].script(call("add_labels", {"labels": ["bug"]}), say("Done."))
    world.service.deliver(opened(), event="issues")
    found = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "NO_TOOL_OFFERED" in found[0]
    assert world.gh.labels_on(REPO, 1) == [] and world.gh.calls_to("POST", r"/issues/\d+/labels$") == []
    assert [row["status"] for row in finished(world)] == ["done"]


@scenario
def test_a_pull_request_automation_that_may_review_posts_one_review_with_its_findings(world):
    world.gh.add_content(REPO, ".github/bot.yml", REVIEW)
    world.providers["codex"].script(call("suggest_change", FIX), say("One bug: add() subtracts."))
    assert world.service.deliver(payloads.pull_request(), event="pull_request").json()["queued"] is True
    answer = world.answer()
    [review] = world.reviews()
    assert review["state"] == "COMMENTED" and "Review by codex" in review["body"]
    assert "Focus: Look for bugs in the arithmetic" in review["body"]
    [comment] = review["_comments"]
    assert (comment["path"], comment["line"], comment["side"]) == ("app.py", BUG_LINE, "RIGHT")
    assert "```suggestion\n    return a + b\n```" in comment["body"]
    assert "Review posted" in answer and review["html_url"] in answer
    asked = world.providers["codex"].main_requests()[0].last_user_text
    assert f"Review pull request #{PR}" in asked and "Do not change any file." in asked


def test_a_bot_command_is_never_offered_add_labels_even_where_an_automation_may_label(world):
    world.gh.add_content(REPO, ".github/bot.yml", TRIAGE)
    labelled(world, "bug")
    world.providers["codex"].script(call("add_labels", {"labels": ["bug"]}), say("Done."))
    world.gh.add_comment(REPO, 1, "@bot codex label this bug", user="Codertocat", comment_id=7003)
    data = payload("issue_comment.created", "@bot codex label this bug")
    data["comment"]["id"] = 7003
    assert world.service.deliver(data).status_code == 202
    found = world.gh.wait_for(lambda: answers(world), timeout=180)
    assert "NO_TOOL_OFFERED" in found[0]
    assert world.gh.labels_on(REPO, 1) == [] and world.gh.calls_to("POST", r"/issues/\d+/labels$") == []
