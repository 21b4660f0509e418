"""The intake's side of the repository events beyond `issues`: a comment without a mention, a pull
request's events (which an automatic trigger may take first: the automations ride on its job), and
the filters `pull_request:` declares (labels, base branches)."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.automations import matching
from bot.intake.automation_event import EVENT_ACTIONS, KIND, EventFacts, read_detail, riding
from bot.intake.decide import Episode, Event, Ignore, decide
from bot.workspace.repo_config import parse
from tests.automations import payloads


def _candidate(event: str, data: dict) -> Episode | Ignore:
    decision = decide(Event(event, data, delivery="d-1"), "bot")
    assert isinstance(decision, Episode | Ignore)
    return decision


def test_a_comment_without_a_mention_is_an_automation_candidate_for_its_comment():
    decision = _candidate("issue_comment", payloads.comment())
    assert isinstance(decision, Episode) and decision.spec.automatic.kind == KIND
    assert decision.spec.automatic.detail == "issue_comment.created"
    assert decision.spec.target == {"type": "issue_comment", "id": 5001} and decision.spec.author == "Codertocat"


def test_a_comment_that_mentions_the_bot_is_never_an_automations():
    decision = _candidate("issue_comment", payloads.comment("thanks @bot, that helped"))
    assert isinstance(decision, Ignore)


def test_the_bots_own_comment_is_no_candidate():
    assert isinstance(_candidate("issue_comment", payloads.comment(user="bot[bot]", user_type="Bot")), Ignore)
    assert isinstance(_candidate("issue_comment", payloads.comment(user="ci-helper[bot]", user_type="Bot")), Ignore)


def test_a_comment_on_a_pull_request_is_a_candidate_on_that_pull_request():
    data = payloads.comment(number=2)
    data["issue"]["pull_request"] = {"url": "https://api.github.com/repos/Codertocat/Hello-World/pulls/2"}
    decision = _candidate("issue_comment", data)
    assert decision.spec.number == 2 and decision.spec.is_pr


def test_a_pull_request_opened_stays_its_triggers_job_and_its_automations_ride_on_it():
    decision = _candidate("pull_request", payloads.pull_request())
    assert decision.spec.automatic.kind == "pull_request_opened"
    assert riding(decision.spec.event, decision.spec.action, decision.spec.automatic.detail) == "pull_request.opened"


def test_a_label_that_is_not_a_bot_label_is_a_candidate_carrying_the_label():
    decision = _candidate("pull_request", payloads.pull_request("labeled", label="needs CI fix"))
    assert decision.spec.automatic.kind == KIND
    assert read_detail(decision.spec.automatic.detail) == EventFacts("pull_request", "labeled", label="needs CI fix")


def test_the_bots_own_pull_request_events_are_no_candidates():
    assert isinstance(_candidate("pull_request", payloads.pull_request("labeled", "bug", sender="bot[bot]")), Ignore)
    assert isinstance(_candidate("pull_request", payloads.pull_request("synchronize", sender="bot[bot]")), Ignore)


def test_events_and_actions_outside_the_allowlist_ride_on_nothing():
    assert riding("pull_request", "closed") is None and riding("issues", "assigned") is None
    assert riding("push", "opened") is None and riding(None, None) is None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_a_detail_reads_back_only_through_the_allowlist(detail):
    facts = read_detail(detail)
    if facts is not None:
        assert facts.action in EVENT_ACTIONS[facts.event]
        assert len(facts.label) <= 50 and all(c in "0123456789abcdef" for c in facts.head)
        assert read_detail(facts.detail()) == facts


@settings(max_examples=100, deadline=None)
@given(st.text(min_size=1, max_size=50).filter(lambda t: t.strip() == t and t.isprintable()))
def test_any_label_name_goes_through_the_queue_and_back_unchanged(label):
    facts = EventFacts("pull_request", "labeled", label=label)
    assert read_detail(facts.detail()) == facts


FILTERED = parse(
    "automations:\n"
    "  - {name: any, on: {pull_request: {types: [opened, labeled]}}, agent: codex, prompt: p}\n"
    "  - {name: bugs, on: {pull_request: {types: [labeled], labels: [bug]}}, agent: codex, prompt: p}\n"
    "  - {name: release, on: {pull_request: {branches: ['release/*']}}, agent: codex, prompt: p}\n"
    "  - {name: chat, on: {issue_comment: {}}, agent: codex, prompt: p}\n").automations


def _names(found) -> list[str]:
    return [a.name for a in found]


def test_a_labeled_automation_with_labels_runs_only_for_those_labels():
    assert _names(matching.for_event(FILTERED, EventFacts("pull_request", "labeled", label="bug"))) == ["any", "bugs"]
    assert _names(matching.for_event(FILTERED, EventFacts("pull_request", "labeled", label="docs"))) == ["any"]


def test_a_branches_filter_runs_only_on_pull_requests_into_a_matching_base():
    release = FILTERED[2]
    assert matching.needs_pull(release) and not matching.needs_pull(FILTERED[0])
    assert matching.pull_matches(release, {"base": {"ref": "release/1.2"}, "labels": []})
    assert not matching.pull_matches(release, {"base": {"ref": "release/1.2/hotfix"}, "labels": []})
    assert not matching.pull_matches(release, {"base": {"ref": "main"}, "labels": []})


def test_a_double_star_branch_pattern_crosses_parts():
    found = parse("automations:\n  - {name: r, on: {pull_request: {branches: ['release/**']}}, agent: codex, "
                  "prompt: p}\n").automations[0]
    assert matching.pull_matches(found, {"base": {"ref": "release/1.2/hotfix"}})


def test_a_comment_runs_the_issue_comment_automations():
    assert _names(matching.for_event(FILTERED, EventFacts("issue_comment", "created"))) == ["chat"]
