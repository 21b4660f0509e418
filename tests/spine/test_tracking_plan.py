"""The live checklist as a person reads it: the agent's own plan shown once as its own lines, no
raw `report_progress {"markdown": …}` call, and an elapsed time that moves between steps."""
from __future__ import annotations

import asyncio
import inspect
import json

from hypothesis import given
from hypothesis import strategies as st

from adapters.base import Event, EventKind
from bot.episode.progress import Progress
from bot.job import tracking as tracking_module
from bot.job.review_job import AgentTracking
from bot.job.tracking import Checklist, TrackingComment
from tests.spine.test_tracking import RecordingSurface

PLAN = "- [x] read calc.py\n- [ ] fix add()\n- [ ] run the tests"


def _progress_call(markdown: str) -> Event:
    return Event(EventKind.TOOL_USE, tool="mcp__bot__report_progress", text=json.dumps({"markdown": markdown}))


def test_the_agents_plan_is_shown_once_with_its_own_boxes():
    checklist = Checklist()
    checklist.from_event(_progress_call(PLAN))
    checklist.set_plan(PLAN)
    rendered = checklist.render()
    assert rendered.splitlines() == ["- [x] read calc.py", "- [ ] fix add()", "- [ ] run the tests"]


def test_a_new_report_replaces_the_plan_instead_of_adding_to_it():
    checklist = Checklist()
    checklist.set_plan(PLAN)
    checklist.set_plan("- [x] read calc.py\n- [x] fix add()")
    assert checklist.render().count("read calc.py") == 1 and "run the tests" not in checklist.render()


def test_the_progress_tool_call_is_not_shown_as_a_call_and_closes_nothing_else():
    checklist = Checklist()
    checklist.from_event(Event(EventKind.TOOL_USE, tool="mcp__bot__read_file", text='{"path": "calc.py"}'))
    checklist.from_event(_progress_call(PLAN))
    checklist.from_event(Event(EventKind.TOOL_RESULT))  # read_file's result
    checklist.from_event(Event(EventKind.TOOL_RESULT))  # report_progress's result
    rendered = checklist.render()
    assert "report_progress" not in rendered and "markdown" not in rendered
    assert "- [x] read_file calc.py" in rendered


@given(st.lists(st.tuples(st.sampled_from(["- [x] ", "- [ ] ", "* ", "1. ", "", "- [X] "]),
                          st.text(st.characters(blacklist_categories=["Cs"]), max_size=40)), max_size=40))
def test_no_plan_line_is_ever_rendered_with_two_boxes(lines):
    checklist = Checklist()
    checklist.set_plan("\n".join(prefix + text for prefix, text in lines))
    rendered = checklist.render().splitlines()
    assert len(rendered) <= tracking_module.MAX_PLAN
    assert not any(line.count("[x]") + line.count("[ ]") > 1 and line.startswith(("- [x] - [", "- [ ] - ["))
                   for line in rendered)


async def test_report_progress_reaches_the_comment_as_the_plan():
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0)
    await tracking.start("**codex** is on it")
    await tracking.plan(PLAN)
    body = surface.edits[-1][1]
    assert "- [x] read calc.py" in body and "- [x] - [x]" not in body


async def test_between_steps_the_working_comment_is_edited_so_its_time_moves(monkeypatch):
    monkeypatch.setattr(tracking_module, "HEARTBEAT_S", 0.05)
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0)
    await tracking.start("**codex** is on it")
    await asyncio.wait_for(surface.edited.wait(), 60)  # no step happened: the heartbeat edited
    await tracking.finish("the answer")
    assert surface.edits[-1] == (7, "the answer")


def test_both_tracking_types_implement_every_progress_member():
    members = {name for name, _ in inspect.getmembers(Progress) if not name.startswith("_")}
    for kind in (TrackingComment, AgentTracking):
        assert members <= {name for name, _ in inspect.getmembers(kind)}, kind


async def test_several_reviewers_link_each_live_page_under_its_name():
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0)
    await tracking.start("**codex, claude** reviewing")
    AgentTracking(tracking, "codex", several=True).link_live("https://bot.example.com/runs/a")
    AgentTracking(tracking, "claude", several=True).link_live("https://bot.example.com/runs/b")
    assert "[codex live](https://bot.example.com/runs/a)" in tracking.header
    assert "[claude live](https://bot.example.com/runs/b)" in tracking.header


async def test_a_fallback_run_replaces_the_live_link():
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0)
    await tracking.start("**codex** is on it")
    tracking.link_live("https://bot.example.com/runs/a")
    tracking.link_live("https://bot.example.com/runs/b")
    assert tracking.header == "**codex** is on it · [follow it live](https://bot.example.com/runs/b)"


def test_a_link_in_the_agents_words_is_not_clickable_in_the_checklist():
    from tests.record.github_view import acts

    checklist = Checklist()
    checklist.from_event(Event(EventKind.TEXT, text="Please [re-authenticate here](https://evil.example/login)"))
    checklist.set_plan("- [ ] [sign in again](https://evil.example/login) to continue")
    assert acts(checklist.render()) == []
