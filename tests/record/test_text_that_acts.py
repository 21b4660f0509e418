"""Threat model class 8: text that acts on merge or on a click, in what the bot says.

Someone who wrote the diff, the issue or the request puts a "re-authenticate here" link, an image,
a team mention or a closing keyword into the agent's or the requester's words; the bot's answer,
review comments and check-run annotations must show it, not act on it (tests/record/github_view.py
reads each as GitHub would)."""
from __future__ import annotations

from adapters.base import Result, Usage
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import answer as answer_module
from bot.job.modes import GitHubMode
from bot.job.pipeline import Job, Turn
from bot.job.run import JobRun
from bot.record import render
from bot.record.recorder import Recorder
from bot.review import checks
from bot.review.findings import Finding, Scope
from bot.review.merge import merge
from bot.review.render import AgentOutcome, review_payload
from bot.service import store
from tests.entry_settings import current
from tests.fakes.thread import quiet_thread
from tests.record.github_view import acts

PHISH = ("Your session expired: [re-authenticate here](https://github.com.evil.example/login) "
         "or see ![status](https://evil.example/pixel.png) and www.evil.example/help, "
         "cc @octo-org/security; this fixes #12")


def answered(text: str) -> str:
    db = store.connect(settings=current())
    run_id = Recorder(db).start_run(agent="codex", conversation="o/r#1", limits={}, base_commit="a" * 40)
    result = Result(ok=True, text=text, session_id="s-1", usage=Usage(), events=[], agent="codex")
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="look")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(quiet_thread()), settings=current())
    return answer_module.compose(JobRun.begin(db, ctx), ctx, "codex", Turn(result, run_id, False, None, "1.0"), None)


def agent_part(body: str) -> str:
    """The answer before the bot's provenance block (whose run link is the bot's own)."""
    return body[:body.index("<details>")] if "<details>" in body else body


def test_a_reauthenticate_link_in_an_answer_shows_its_full_address_and_acts_on_nothing():
    shown = agent_part(answered(PHISH))
    assert acts(shown) == []
    assert "https://github.com.evil.example/login" in shown and "re-authenticate here" in shown


def test_a_reauthenticate_link_in_a_review_comment_shows_its_full_address_and_acts_on_nothing():
    finding = Finding("codex", "app.py", 2, "RIGHT", PHISH)
    review = review_payload(merge([finding], ["codex"]), [AgentOutcome("codex", True, summary=PHISH)],
                            Scope(["app.py"]), commit="c" * 40)
    [comment] = review["comments"]
    assert acts(comment["body"]) == [] and "https://github.com.evil.example/login" in comment["body"]
    summary = review["body"].split("</summary>", 1)[1].rsplit("</details>", 1)[0]  # the rest is the bot's
    assert acts(summary) == [] and "https://github.com.evil.example/login" in summary


def test_a_reauthenticate_link_in_a_check_run_annotation_shows_its_full_address_and_acts_on_nothing():
    merged = merge([Finding("codex", "app.py", 2, "RIGHT", PHISH, severity="important")], ["codex"])
    [note] = checks.outcome(merged, fail_on="important", minimum="nit", summary="s").annotations
    assert acts(note["message"]) == [] and "https://github.com.evil.example/login" in note["message"]


def test_a_failure_reason_in_the_check_run_summary_acts_on_nothing():
    assert acts(checks.errored(PHISH).summary) == []


def test_a_team_mention_in_agent_text_is_shown_but_not_live():
    shown = render.markdown("please ask @octo-org/security and a/@octocat")
    assert acts(shown) == [] and "octo-org/security" in shown.replace(render.ZWSP, "")


def test_an_image_in_html_is_shown_as_its_address_not_loaded():
    shown = render.markdown('look <img src="https://evil.example/p.png"> <a href="https://evil.example">ok</a>')
    assert acts(shown) == [] and "https://evil.example/p.png" in shown


def test_an_entity_spelled_mention_or_reference_does_not_come_alive():
    assert acts(render.markdown("ask &#64;octocat, it f&#105;xes &#35;3 &lbrack;x](https://e.example)")) == []


def test_code_the_agent_wrote_is_shown_exactly():
    text = "run `curl https://x.example/@me` then\n\n```\nfixes #1 [a](https://b.example) <img src=c>\n```\n"
    shown = render.markdown(text)
    assert "`curl https://x.example/@me`" in shown and "fixes #1 [a](https://b.example) <img src=c>" in shown


def test_rendering_twice_changes_nothing_more():
    once = render.markdown(PHISH)
    assert render.markdown(once) == once


def test_the_closing_keyword_the_bot_means_is_the_only_one_left():
    body = render.concat(render.closing(7), render.markdown("\n\nthis also closes #1"))
    assert acts(body) == ["closing Fixes #7"]


def test_a_sender_refuses_text_that_did_not_come_from_the_renderer():
    try:
        render.required("Fixes #1")
    except TypeError:
        return
    raise AssertionError("a plain str passed as rendered text")


def test_the_outgoing_gate_breaks_a_closing_keyword_and_a_team_mention_the_bot_composed_by_mistake():
    composed = "Done for @alice. This resolves #4; cc @org/team"
    gated = render.outgoing(composed)
    assert isinstance(gated, render.Rendered)
    assert acts(gated) == ["mention @alice"]  # the requester the bot means stays mentioned
