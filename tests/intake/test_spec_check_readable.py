"""The intake checks each spec it stores with `JobSpec.check_readable` (the reading's checks
without building the spec): it refuses exactly what `from_dict` refuses, with the same reason."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.intake.spec import JobSpec, SpecError

ROW = {"repo": "octo/repo", "number": 3, "author": "alice", "installation_id": 5, "is_pr": True,
       "target": {"type": "review_comment", "id": 71, "thread": 70, "path": "a.py", "line": 4},
       "automatic": {"kind": "label", "detail": "bot:review", "draft": False},
       "command": {"kind": "run", "agent": "codex", "new_session": False, "request": "explain",
                   "unknown_name": None, "review": True, "agents": ["codex"]}}

values = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.sampled_from(
    ["run", "help", "not_allowed", "review_comment", "label"]), st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.sampled_from(["kind", "id", "type", "x"]), st.one_of(st.text(max_size=3), st.integers()),
                    max_size=3))


def _reading(read, data):
    try:
        read(data)
    except SpecError as exc:
        return str(exc)
    return None


@settings(max_examples=400, deadline=None)
@given(where=st.sampled_from([(), ("command",), ("target",), ("automatic",)]),
       key=st.sampled_from(["repo", "number", "kind", "agents", "type", "id", "detail", "draft", "reply",
                            "unknown", "target", "automatic", "command", "agent"]),
       value=values, drop=st.booleans())
def test_the_check_refuses_what_the_reading_refuses_with_the_same_reason(where, key, value, drop):
    data = json.loads(json.dumps(ROW))
    part = data
    for name in where:
        part = part[name]
    if drop:
        part.pop(key, None)
    else:
        part[key] = value
    assert _reading(JobSpec.check_readable, data) == _reading(JobSpec.from_dict, data)


def test_a_stored_automatic_trigger_without_its_kind_is_refused_by_name():
    data = {**ROW, "automatic": {"detail": "bot:review"}}
    with pytest.raises(SpecError, match="automatic.kind"):
        JobSpec.from_dict(data)


def test_a_spec_the_intake_made_is_readable():
    spec = JobSpec.from_dict(ROW)
    JobSpec.check_readable(spec.to_dict())
    assert JobSpec.from_dict(spec.to_dict()) == spec
