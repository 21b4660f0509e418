"""Recording one long CLI line costs its redaction (every encoding of every secret is looked for):
that work runs off the event loop, so the webhooks and 👀 of other threads go on meanwhile."""
from __future__ import annotations

import asyncio
import threading

from adapters.base import Event, EventKind
from bot.record import recorder as recorder_module
from bot.record.recorder import Recorder
from tests.entry_settings import database

SECRET = "sk-ant-api03-" + "s" * 40


async def test_a_long_lines_redaction_leaves_the_event_loop_running(monkeypatch):
    redacting, ticked, waited = threading.Event(), threading.Event(), []
    redact = Recorder.redact

    def redact_once_the_loop_ticked(self, text):
        if len(text) >= recorder_module.OFF_LOOP_RAW:
            redacting.set()
            waited.append(ticked.wait(30))  # a redaction on the event loop holds it: no tick can come
        return redact(self, text)

    monkeypatch.setattr(Recorder, "redact", redact_once_the_loop_ticked)

    async def tick_while_redacting():
        while not redacting.is_set():
            await asyncio.sleep(0.01)
        ticked.set()

    recorder = Recorder(database(), secrets=[SECRET])
    run_id = recorder.start_run(agent="codex")
    line = ('{"type":"text","text":"' + "x" * recorder_module.OFF_LOOP_RAW + SECRET + '"}').encode()
    ticker = asyncio.create_task(tick_while_redacting())
    try:
        await recorder.attest_async(run_id, Event(EventKind.TEXT, raw=line))
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
