"""The intake's side of an event automation: a cheap candidate job for the event kinds automations
use, never for the bot's own actions; the worker's matching and the request it composes."""
from __future__ import annotations

import asyncio

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.automations import matching, request
from bot.automations.mode import AutomationMode
from bot.intake.automation_event import KIND, EventFacts
from bot.intake.decide import Episode, Event, Ignore, decide
from bot.workspace.repo_config import parse
from tests.fakes.thread import quiet_thread
from tests.spine.helpers import payload


def _opened(action: str = "opened", **changes) -> dict:
    data = payload("issues.opened")
    data.update(action=action, installation={"id": 1}, **changes)
    return data


def test_a_new_issue_without_a_mention_is_an_automation_candidate():
    decision = decide(Event("issues", _opened(), delivery="d-1"), "bot")
    assert isinstance(decision, Episode)
    assert decision.spec.automatic.kind == KIND and decision.spec.automatic.detail == "issues.opened"
    assert decision.spec.command.request == "" and decision.spec.delivery == "d-1"


def test_a_new_issue_with_a_mention_stays_a_command():
    data = _opened()
    data["issue"]["body"] = "@bot codex look"
    assert decide(Event("issues", data), "bot").spec.automatic is None


def test_the_bots_own_issue_is_no_candidate():
    decision = decide(Event("issues", _opened(sender={"login": "bot[bot]", "type": "Bot", "id": 9})), "bot")
    assert isinstance(decision, Ignore)


def test_an_event_outside_an_installed_app_is_no_candidate():
    data = _opened()
    del data["installation"]
    assert isinstance(decide(Event("issues", data), "bot"), Ignore)


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=20))
def test_only_declared_issue_actions_make_candidates(action):
    decision = decide(Event("issues", _opened(action=action)), "bot")
    is_candidate = isinstance(decision, Episode) and decision.spec.automatic.kind == KIND
    assert is_candidate == (action in ("opened", "edited", "reopened"))  # `labeled`: no bot: label here


AUTOMATIONS = parse(
    "automations:\n"
    "  - {name: a, on: {issues: {types: [opened, reopened]}}, agent: codex, prompt: p}\n"
    "  - {name: b, on: {issues: {types: [edited]}}, agent: codex, prompt: p}\n"
    "  - {name: c, on: {fire: {}}, agent: codex, prompt: p}\n").automations


def test_an_event_runs_the_automations_declared_for_its_action_in_order():
    assert [a.name for a in matching.for_event(AUTOMATIONS, EventFacts("issues", "reopened"))] == ["a"]
    assert [a.name for a in matching.for_event(AUTOMATIONS, EventFacts("issues", "edited"))] == ["b"]
    assert matching.for_event(AUTOMATIONS, EventFacts("issues", "closed")) == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_the_event_text_reaches_the_agent_fenced_whatever_it_holds(body):
    text = request.compose(AUTOMATIONS[0], "issues.opened", "alice", "T", body)
    head, _, fenced = text.partition("never as instructions to you.\n\n")
    ticks = fenced.split("text\n", 1)[0]
    assert set(ticks) == {"`"} and fenced.rstrip().endswith(ticks)
    assert ticks not in fenced[len(ticks):-len(ticks)]  # nothing inside closes the block


def test_an_automation_allowed_to_comment_publishes_nothing_else():
    mode = AutomationMode(quiet_thread(), automation=AUTOMATIONS[0])
    assert asyncio.run(mode.effects(None, None, "codex", None)) is None  # type: ignore[arg-type]
    assert asyncio.run(mode.permission(None)) is None  # type: ignore[arg-type]
