"""parse() never raises and never drops a line, whatever the CLI prints (hypothesis)."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters import base
from tests.adapters.helpers import FIXTURES

AGENTS = tuple(base.names())  # the registry: every adapter
REAL_LINES = [line for path in sorted(FIXTURES.glob("*.jsonl")) for line in path.read_bytes().splitlines()]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "subtype", "item", "part", "message", "content", "usage", "error",
                         "result", "is_error", "status", "stats", "tokens", "role", "state"]) | st.text(max_size=8),
        inner, max_size=5),
    max_leaves=20)


def _kept(agent: str, line: bytes) -> bool:
    events = base.get(agent).parse(line)
    return bool(events) and all(event.raw == line.rstrip(b"\r\n") for event in events)


@settings(max_examples=300, deadline=None)
@given(agent=st.sampled_from(AGENTS), data=st.binary(max_size=400))
def test_arbitrary_bytes_become_events_with_the_raw_line(agent, data):
    """Random bytes never raise and always come back as events carrying the line."""
    line = data.replace(b"\n", b" ")
    assert _kept(agent, line)


@settings(max_examples=300, deadline=None)
@given(agent=st.sampled_from(AGENTS), index=st.integers(0, len(REAL_LINES) - 1), cut=st.integers(0, 4000))
def test_truncated_real_lines_are_kept(agent, index, cut):
    """A real line cut anywhere (a CLI killed mid-write) is kept, whichever adapter reads it."""
    assert _kept(agent, REAL_LINES[index][:cut])


@settings(max_examples=300, deadline=None)
@given(agent=st.sampled_from(AGENTS), value=JSON_VALUES)
def test_schema_drift_in_json_lines_is_kept(agent, value):
    """Well-formed JSON of unexpected shapes (schema drift) never raises."""
    assert _kept(agent, json.dumps(value).encode())


REAL_OBJECTS = [obj for obj in (base.json_object(line) for line in REAL_LINES) if obj]


@settings(max_examples=400, deadline=None)
@given(agent=st.sampled_from(AGENTS), index=st.integers(0, len(REAL_OBJECTS) - 1),
       field_index=st.integers(0, 30), value=JSON_VALUES)
def test_real_events_with_a_field_of_the_wrong_type_are_kept(agent, index, field_index, value):
    """A real event with one field replaced by any JSON value never raises."""
    obj = dict(REAL_OBJECTS[index])
    keys = [key for key in obj if key != "type"]
    if keys:
        obj[keys[field_index % len(keys)]] = value
    assert _kept(agent, json.dumps(obj).encode())
