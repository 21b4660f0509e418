"""Recording one long CLI line costs its redaction (every encoding of every secret is looked for):
that work runs off the event loop (on the recorder's writer thread, bot/record/event_writer.py), so
the webhooks and 👀 of other threads go on meanwhile."""
from __future__ import annotations

import asyncio
import threading

from adapters.base import Event, EventKind
from bot.record import event_writer
from bot.record.recorder import Recorder
from tests.entry_settings import database

SECRET = "sk-ant-api03-" + "s" * 40
LONG = 64 * 1024


async def test_a_long_lines_redaction_leaves_the_event_loop_running(monkeypatch):
    redacting, ticked, waited = threading.Event(), threading.Event(), []
    redact = event_writer.redact

    def redact_once_the_loop_ticked(text, secrets):
        if len(text) >= LONG:
            redacting.set()
            waited.append(ticked.wait(30))  # a redaction on the event loop holds it: no tick can come
        return redact(text, secrets)

    monkeypatch.setattr(event_writer, "redact", redact_once_the_loop_ticked)

    async def tick_while_redacting():
        while not redacting.is_set():
            await asyncio.sleep(0.01)
        ticked.set()

    recorder = Recorder(database(), secrets=[SECRET])
    run_id = recorder.start_run(agent="codex")
    line = ('{"type":"text","text":"' + "x" * LONG + SECRET + '"}').encode()
    ticker = asyncio.create_task(tick_while_redacting())
    try:
        await recorder.attest_async(run_id, Event(EventKind.TEXT, raw=line))
        await recorder.flushed(run_id)  # stored: redacted meanwhile
    finally:
        ticker.cancel()
    assert waited == [True]
    raw = recorder.events(run_id)[-1]["raw"]
    assert SECRET not in raw and raw.startswith('{"type":"text"')


async def test_a_short_line_is_recorded_as_before(monkeypatch):
    recorder = Recorder(database(), secrets=[SECRET])
    run_id = recorder.start_run(agent="codex")
    await recorder.attest_async(run_id, Event(EventKind.TEXT, raw=f'{{"text":"{SECRET}"}}'.encode()))
    assert SECRET not in recorder.events(run_id)[-1]["raw"]
