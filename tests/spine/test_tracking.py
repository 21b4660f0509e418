"""The tracking comment: throttled live edits, an always-sent final edit, redaction."""
from __future__ import annotations

import asyncio

from adapters.base import Event, EventKind
from bot.job import tracking as tracking_module
from bot.job.tracking import TrackingComment


class RecordingSurface:
    def __init__(self):
        self.posts, self.edits = [], []
        self.edited = asyncio.Event()

    async def post(self, body):
        self.posts.append(body)
        return 7

    async def edit(self, handle, body):
        self.edits.append((handle, body))
        self.edited.set()


class StoppedClock:
    """The tracking comment's clock, standing still: every event of the burst is inside the interval."""

    @staticmethod
    def monotonic() -> float:
        return 1000.0


async def test_burst_of_events_is_one_throttled_edit(monkeypatch):
    """Many events within the interval produce at most one scheduled edit."""
    monkeypatch.setattr(tracking_module, "time", StoppedClock)
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0.3)
    await tracking.start("**codex** is on it")
    for n in range(20):
        await tracking.on_event(Event(EventKind.TOOL_USE, tool="read", text=f"file{n}"))
    await asyncio.wait_for(surface.edited.wait(), 60)  # the one scheduled edit, once its timer fired
    assert len(surface.edits) == 1 and "file19" in surface.edits[0][1]


async def test_final_edit_is_sent_even_inside_the_interval():
    """The answer replaces the working text at once."""
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=60)
    await tracking.start("working")
    await tracking.finish("the answer")
    assert surface.edits[-1] == (7, "the answer")


async def test_retry_edits_the_stored_comment_instead_of_posting():
    """A retried job with a stored tracking id never posts a second comment."""
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], handle=41)
    await tracking.start("working again")
    await tracking.finish("done")
    assert surface.posts == [] and {h for h, _ in surface.edits} == {41}


async def test_secrets_are_redacted_before_posting():
    """A key in the answer never reaches the surface."""
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: ["sk-secret-value-123"])
    await tracking.start("working")
    await tracking.finish("the key is sk-secret-value-123")
    assert "sk-secret-value-123" not in surface.edits[-1][1]


async def test_created_comment_id_is_handed_back():
    """on_created receives the new comment id so the job can store it."""
    seen = []
    tracking = TrackingComment(RecordingSurface(), lambda: [], on_created=seen.append)
    await tracking.start("working")
    assert seen == [7]


async def test_progress_after_the_answer_does_not_overwrite_it():
    """A late progress note (a bridge callback after the run ended) leaves the answer in place."""
    surface = RecordingSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=0)
    await tracking.start("working")
    await tracking.finish("the answer")
    await tracking.note("late progress")
    assert surface.edits[-1] == (7, "the answer")


class GatedSurface(RecordingSurface):
    """Holds the terminal edit until `gate` is set, as a slow GitHub would."""

    def __init__(self):
        super().__init__()
        self.gate, self.entered = asyncio.Event(), asyncio.Event()

    async def edit(self, handle, body):
        if body == "the answer":
            self.entered.set()
            await self.gate.wait()
        await super().edit(handle, body)


async def test_progress_timer_firing_during_the_final_edit_does_not_overwrite_it():
    """A throttled progress edit that fires while the answer is being posted is dropped."""
    surface = GatedSurface()
    tracking = TrackingComment(surface, lambda: [], interval_s=60)
    await tracking.start("working")
    final = asyncio.create_task(tracking.finish("the answer"))
    await surface.entered.wait()
    late = asyncio.create_task(tracking._edit_now())  # what the fired timer runs
    await asyncio.sleep(0)
    surface.gate.set()
    await asyncio.gather(final, late)
    assert surface.edits[-1] == (7, "the answer")


def test_tool_call_is_open_until_its_result_arrives():
    """The checklist ticks a tool line when the call returns, not when it starts."""
    from bot.job.tracking import Checklist

    checklist = Checklist()
    checklist.from_event(Event(EventKind.TOOL_USE, tool="mcp__bot__run", text='{"command": "pytest"}'))
    assert checklist.render() == "- [ ] run pytest"
    checklist.from_event(Event(EventKind.TOOL_RESULT, tool="mcp__bot__run", text="exit 0"))
    assert checklist.render() == "- [x] run pytest"


def test_an_error_is_a_warning_line_not_an_open_box():
    """An error the CLI reported is shown as a warning, not as a step still to do."""
    from bot.job.tracking import Checklist

    checklist = Checklist()
    checklist.from_event(Event(EventKind.ERROR, error="model metadata not found"))
    assert checklist.render() == "- ⚠️ error: model metadata not found"


def test_agent_progress_cannot_mention_people():
    """A progress line the agent reports is posted without notifying anyone."""
    from bot.job.tracking import Checklist
    from bot.record.defang import ZWSP

    checklist = Checklist()
    checklist.add("ping @octocat")
    assert checklist.render() == f"- [x] ping @{ZWSP}octocat"


def test_a_tool_call_reads_as_the_terminal_shows_it_without_its_content():
    """`save_file calc.py`, as `bot run` prints it: the bridge's prefix gone, the file's content not shown."""
    from bot.job.tracking import Checklist

    checklist = Checklist()
    checklist.from_event(Event(EventKind.TOOL_USE, tool="mcp__bot__save_file",
                               text='{"path": "calc.py", "content": "SECRET_BODY = 1"}'))
    checklist.from_event(Event(EventKind.TOOL_RESULT, tool="mcp__bot__save_file", text="saved"))
    assert checklist.render() == "- [x] save_file calc.py"


def test_a_failed_tool_call_is_a_warning_line_with_its_error():
    """The terminal's `✗ run pytest — exit 1` is a warning line here, not a ticked box."""
    from bot.job.tracking import Checklist

    checklist = Checklist()
    checklist.from_event(Event(EventKind.TOOL_USE, tool="mcp__bot__run", text='{"command": "pytest"}'))
    checklist.from_event(Event(EventKind.TOOL_RESULT, tool="mcp__bot__run", error="exit 1"))
    assert checklist.render() == "- ⚠️ run pytest — exit 1"


def test_a_tool_without_a_named_argument_shows_no_bulky_argument():
    """Arguments without a path or command are shown short, a file's content left out."""
    from bot.record.tool_line import tool_detail

    assert tool_detail('{"content": "x" , "mode": "append"}') == '{"mode": "append"}'
