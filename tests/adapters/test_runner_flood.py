"""One episode's output cannot stall the service: stdout lines are split in linear work and held up
to a cap (the rest counted in a cut record), the events kept in memory are bounded, and a CLI
home is packed off the event loop without reading a sparse file's holes."""
from __future__ import annotations

import asyncio
import threading
import tracemalloc

import pytest

from adapters.base import Event, EventKind, Usage
from bot.episode import session_home
from bot.episode.kept_events import KeptEvents
from bot.episode.runner import run_episode
from bot.episode.stdout_lines import LINE_CAP, LineSplitter
from bot.record.recorder import Recorder
from bot.service import store
from sandbox.base import Limits
from sandbox.tier0 import Tier0Spawner
from tests.adapters.test_runner import ScriptAdapter, _printer, _setup
from tests.entry_settings import current
from tests.store.postgres import Cluster, bin_dir

MiB = 1 << 20
CHUNK = 64 << 10
ROLLOUT = ".codex/sessions/2026/12/01/rollout-2026-12-01T10-00-00-abc.jsonl"


@pytest.mark.parametrize("mib", [8, 16, 32])
def test_a_stdout_line_of_n_mib_is_split_with_work_linear_in_n(mib):
    """Each byte of a long line is copied a bounded number of times, however it is chunked."""
    lines, piece = LineSplitter(cap=64 * MiB), b"x" * CHUNK
    for _ in range(mib * MiB // CHUNK):
        assert lines.feed(piece) == []
    [line] = lines.feed(b"\n")
    assert (len(line.data), line.cut) == (mib * MiB, 0)
    assert lines.copied <= 2 * mib * MiB


async def test_stdout_without_a_newline_is_held_in_bounded_memory(tmp_path):
    """64 MiB printed without a newline never holds more than a few MiB in the service."""
    episode, config = _setup(tmp_path)
    script = ("import sys\nfor _ in range(1024): sys.stdout.buffer.write(b'y' * 65536)\n"
              "sys.stdout.buffer.flush()")
    tracemalloc.start()
    try:
        result = await run(ScriptAdapter(script), episode, config)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0
    assert peak < 24 * MiB, f"peak {peak / MiB:.1f} MiB"


async def test_a_line_over_the_cap_becomes_a_cut_record_with_the_cut_byte_count(tmp_path):
    """The line is kept up to the cap; the record says how many bytes of it were cut."""
    episode, config = _setup(tmp_path)
    script = (f"import sys\nsys.stdout.write('z' * {LINE_CAP + 12345} + '\\n')\n"
              + _printer("after the long line"))
    recorder = Recorder(tmp_path / "record.db")
    run_id = recorder.start_run(agent="script")
    result = await run(ScriptAdapter(script), episode, config,
                       on_event=lambda event: recorder.attest(run_id, event))
    cut = [e for e in result.events if e.data and "cut_bytes" in e.data]
    assert [e.data["cut_bytes"] for e in cut] == [12345]
    assert [row["outcome"] for row in recorder.events(run_id) if row["kind"] == "error"] == [
        f"a stdout line of {LINE_CAP + 12345} bytes was cut at {LINE_CAP} bytes: 12345 bytes were not parsed"]
    assert result.text == "after the long line"


async def test_a_million_line_episode_keeps_a_bounded_number_of_events_in_memory(tmp_path):
    """Every line reaches the observer (the record); memory keeps a bounded few, and the answer."""
    episode, config = _setup(tmp_path)
    config.limits = Limits(timeout_s=600)  # a million lines on a busy machine: the count is under test
    script = ("import sys\nw = sys.stdout.write\nfor n in range(1_000_000): w('{\"text\": \"%d\"}\\n' % n)")
    seen = 0

    def count(event):
        nonlocal seen
        seen += 1

    result = await run(ScriptAdapter(script), episode, config, on_event=count)
    assert seen == 1_000_000
    assert len(result.events) <= 2_100
    assert (result.ok, result.text) == (True, "999999"), result.error


def test_usage_past_the_kept_events_is_summed_into_one_event():
    """However many usage lines a CLI prints, finish() reads their exact sum."""
    kept = KeptEvents()
    for _ in range(100_000):
        kept.add(Event(EventKind.USAGE, usage=Usage(input_tokens=2, output_tokens=1)))
    usage = [e.usage for e in kept.events() if e.kind == EventKind.USAGE and e.usage]
    assert len(usage) <= 1_001
    assert (sum(u.input_tokens for u in usage), sum(u.output_tokens for u in usage)) == (200_000, 100_000)


def test_the_text_since_the_last_tool_call_survives_a_flood_of_progress():
    """An answer streamed in deltas, then buried under progress lines, is still there in order,
    with the session id and the tool call before it."""
    kept = KeptEvents()
    kept.add(Event(EventKind.SESSION, session_id="s-1", data={"version": "1.0.0"}))
    kept.add(Event(EventKind.TOOL_USE, tool="shell"))
    for n in range(5_000):
        kept.add(Event(EventKind.TEXT, text=f"{n} "))
    for _ in range(50_000):
        kept.add(Event(EventKind.PROGRESS, text="noise"))
    events = kept.events()
    answer = [e.text for e in events if e.kind == EventKind.TEXT]
    assert "".join(answer) == "".join(f"{n} " for n in range(5_000))
    assert [e.kind for e in events[:2]] == [EventKind.SESSION, EventKind.TOOL_USE]
    assert len(events) <= 7_100


def test_the_last_text_stays_the_last_when_it_alone_carries_the_session_id():
    """The latest session id is kept without hiding the text event that carried it."""
    kept = KeptEvents()
    for _ in range(1_000):  # past the first events kept as they came
        kept.add(Event(EventKind.PROGRESS, text="start"))
    kept.add(Event(EventKind.TEXT, text="a draft"))
    kept.add(Event(EventKind.TEXT, text="the answer", session_id="s-9"))
    for _ in range(3_000):
        kept.add(Event(EventKind.PROGRESS, text="noise"))
    events = kept.events()
    assert [e.text for e in events if e.kind == EventKind.TEXT][-1] == "the answer"
    assert next(e.session_id for e in reversed(events) if e.session_id) == "s-9"


@pytest.fixture
def shared_database(tmp_path, monkeypatch):
    """A PostgreSQL database as the bot's (a CLI home follows the thread only on a shared one)."""
    import base64

    bindir = bin_dir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (make test installs Debian's postgresql)")
    cluster = Cluster(bindir)
    cluster.start()
    monkeypatch.setenv("BOT_DATABASE_URL", cluster.new_database())
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(b"k" * 32).decode())
    yield store.connect(settings=current())
    cluster.stop()


async def test_packing_a_cli_home_after_a_turn_leaves_the_event_loop_running(shared_database, monkeypatch):
    """While the home is being packed, another coroutine runs: the packer waits for its tick."""
    packing, ticked, waited = threading.Event(), threading.Event(), []
    add_file = session_home._add_file

    def add_file_once_the_loop_ticked(*args):
        packing.set()
        waited.append(ticked.wait(30))  # a packer on the event loop holds it: no tick can come
        add_file(*args)

    monkeypatch.setattr(session_home, "_add_file", add_file_once_the_loop_ticked)

    async def tick_while_packing():
        while not packing.is_set():
            await asyncio.sleep(0.01)
        ticked.set()

    async def note(text: str) -> None:
        raise AssertionError(text)

    ticker = asyncio.create_task(tick_while_packing())
    try:
        assert await session_home.following(shared_database, current(), "o/r#1", "codex", note, _a_turn) == "answer"
    finally:
        ticker.cancel()
    assert waited == [True]


async def _a_turn() -> str:
    home = session_home.home_dir(current().data_dir, "o/r#1", "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    (home / ROLLOUT).write_text('{"type":"session_meta"}\n')
    return "answer"


def test_a_sparse_file_in_the_session_state_is_refused_unread(tmp_path):
    """A 500 MiB hole is never read as zeros: the pack is refused and says why."""
    home = session_home.home_dir(current().data_dir, "o/r#1", "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    with open(home / ROLLOUT, "wb") as handle:
        handle.truncate(500 * MiB)
    with pytest.raises(session_home.SessionHomeTooLarge, match="is sparse"):
        session_home.pack(home, "codex")


async def run(adapter, episode, config, **kwargs):
    return await run_episode(adapter, episode, Tier0Spawner(), config, **kwargs)
