"""Property (hypothesis): whatever a run records, in whatever order and however it interleaves with
another run (CLI lines with secrets spliced in, text the database cannot encode, long lines, empty
ones), reading the run back gives every event in the order recorded, numbered 1..n, each text as
`redact` makes it (or, for one the database refused, a stand-in saying so), and no secret."""
from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.base import Tier
from bot.db import connect
from bot.record.recorder import Recorder
from bot.record.redact import redact

SECRET = "sk-ant-api03-" + "q" * 40
PROPERTY = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

plain = st.text(max_size=200)
with_secret = st.tuples(plain, plain).map(lambda parts: parts[0] + SECRET + parts[1])
unencodable = st.tuples(plain, st.sampled_from(["\ud800", "\udfff", "\udc80"])).map("".join)
long_line = st.integers(min_value=1, max_value=300_000).map(lambda n: "x" * n)
texts = st.one_of(plain, with_secret, unencodable, long_line, st.just(""))
events = st.lists(st.tuples(st.sampled_from(list(Tier)), st.sampled_from(["text", "tool_call", "gap"]), texts,
                            st.booleans()), max_size=40)


def encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


@PROPERTY
@given(events)
def test_a_run_reads_back_whole_in_order_redacted_and_numbered(tmp_path_factory, recorded):
    recorder = Recorder(connect(path=tmp_path_factory.mktemp("db") / "bot.db"), secrets=[SECRET])
    run_id, other = recorder.start_run(agent="codex"), recorder.start_run(agent="gemini")
    for tier, kind, text, interleaved in recorded:
        recorder.record(run_id, tier, kind, raw=text)
        if interleaved:
            recorder.declare_gap(other, "another run's event")
    read = recorder.events(run_id)
    assert [e["seq"] for e in read] == list(range(1, len(recorded) + 1))
    assert [e["kind"] for e in read] == [kind for _, kind, _, _ in recorded]
    for event, (_, _, text, _) in zip(read, recorded, strict=True):
        clean = redact(text, [SECRET])
        if encodable(clean):
            assert event["raw"] == clean
        else:
            assert event["raw"].startswith("this event could not be stored") and event["outcome"] == "not stored"
    with sqlite3.connect(recorder.db.url.removeprefix("sqlite:///")) as db:
        assert not db.execute("SELECT 1 FROM run_events WHERE raw LIKE ?", [f"%{SECRET}%"]).fetchall()
