"""The one intake decision (bot/intake/decide.py): Ignore, Reply or Episode, for the webhook, the
automatic triggers and the Action alike."""
from __future__ import annotations

import pytest

from bot.intake.decide import Episode, Event, Ignore, Reply, decide
from bot.intake.payload import Malformed
from bot.intake.spec import JobSpec
from tests.spine.helpers import payload


def comment(body: str, association: str = "OWNER", **fields) -> Event:
    return Event("issue_comment", payload("issue_comment.created", body, author_association=association, **fields),
                 delivery="d-1")


def test_a_members_request_is_an_episode_with_the_request():
    decision = decide(comment("@bot codex explain this"), "bot")
    assert isinstance(decision, Episode) and decision.kind == "episode"
    assert (decision.spec.command.agent, decision.spec.command.request, decision.spec.delivery) == (
        "codex", "explain this", "d-1")


def test_an_outsiders_request_is_the_not_allowed_reply():
    decision = decide(comment("@bot codex explain this", association="NONE"), "bot")
    assert isinstance(decision, Reply) and decision.spec.reply == "not_allowed"


def test_help_is_a_reply_for_anyone():
    decision = decide(comment("@bot help", association="NONE"), "bot")
    assert isinstance(decision, Reply) and decision.spec.reply == "help"


def test_a_members_stop_is_a_stop_job():
    decision = decide(comment("@bot stop"), "bot")
    assert isinstance(decision, Episode) and decision.kind == "stop"


def test_a_bots_comment_is_ignored_saying_why():
    event = comment("@bot codex go")
    event.payload["comment"]["user"].update(login="dependabot[bot]", type="Bot")
    assert decide(event, "bot") == Ignore("the author is a bot")


def test_a_comment_without_a_command_is_ignored_saying_why():
    event = comment("thanks!")
    assert decide(Event(event.name, event.payload, via_app=False), "bot") == Ignore("no @bot command")


def test_a_comment_without_a_command_to_the_app_is_only_an_automation_candidate():
    decision = decide(comment("thanks!"), "bot")  # the worker runs what .github/bot.yml declares for it, if anything
    assert decision.spec.automatic.kind == "automation" and decision.spec.command.request == ""


def test_an_agent_label_is_an_automatic_episode():
    data = payload("pull_request.opened")
    data.update(action="labeled", label={"name": "bot:claude"})
    decision = decide(Event("pull_request", data), "bot")
    assert isinstance(decision, Episode) and decision.spec.automatic is not None
    assert (decision.spec.automatic.kind, decision.spec.command.agents) == ("label", ("claude",))


def test_an_event_without_an_installation_is_ignored_for_the_app():
    event = comment("@bot codex hi")
    del event.payload["installation"]
    assert decide(event, "bot") == Ignore("not delivered to an installed GitHub App")


def test_a_workflows_event_needs_no_installation():
    data = payload("issue_comment.created", "@bot codex hi", author_association="OWNER")
    del data["installation"]
    assert isinstance(decide(Event("issue_comment", data, via_app=False), "bot"), Episode)


def test_a_decided_spec_is_what_the_queue_reads_back():
    spec = decide(comment("@bot claude new fix it"), "bot").spec
    assert JobSpec.from_json(spec.to_json()) == spec


def test_a_review_comment_with_a_line_that_is_not_a_number_is_malformed():
    data = payload("pull_request_review_comment.created", "@bot claude fix", line="4")
    with pytest.raises(Malformed, match="comment.line is str"):
        decide(Event("pull_request_review_comment", data), "bot")
