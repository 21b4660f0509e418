"""`JobSpec.to_dict`, what the queue stores of a spec: every field in the order it is declared,
the command's and the automatic trigger's fields nested, `agents` a list, and the fields written
only when set left out when None; and the dict reads back as the same spec."""
from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec

texts = st.text(max_size=6)
maybe_texts, maybe_ints = st.none() | texts, st.none() | st.integers()
commands = st.builds(Command, kind=st.sampled_from(["run", "help", "status", "stop"]), agent=maybe_texts,
                     new_session=st.booleans(), request=texts, unknown_name=maybe_texts, review=st.booleans(),
                     agents=st.lists(texts, max_size=3).map(tuple))
targets = st.none() | st.fixed_dictionaries({"type": texts, "id": st.integers()},
                                            optional={"thread": maybe_ints, "path": maybe_texts, "line": maybe_ints})
specs = st.builds(JobSpec, repo=texts, number=st.integers(), author=texts, command=commands, repo_id=maybe_ints,
                  installation_id=maybe_ints, author_id=maybe_ints, author_type=texts, association=maybe_texts,
                  is_pr=st.booleans(), title=maybe_texts, target=targets, trigger_key=maybe_texts,
                  event=maybe_texts, action=maybe_texts, delivery=maybe_texts,
                  reply=st.none() | st.sampled_from(["help", "status", "unknown_agent", "not_allowed", "stop"]),
                  automatic=st.none() | st.builds(Automatic, kind=texts, detail=texts, draft=st.booleans()),
                  stopped_job=maybe_ints, coalesced=maybe_ints)


def _field_by_field(spec: JobSpec) -> dict[str, Any]:
    data: dict[str, Any] = {field.name: getattr(spec, field.name) for field in dataclasses.fields(JobSpec)}
    data["command"] = {**{f.name: getattr(spec.command, f.name) for f in dataclasses.fields(Command)},
                       "agents": list(spec.command.agents)}
    data["target"] = dict(spec.target) if spec.target is not None else None
    data["automatic"] = {f.name: getattr(spec.automatic, f.name) for f in dataclasses.fields(Automatic)} \
        if spec.automatic else None
    omitted = ("reply", "automatic", "stopped_job", "coalesced")
    return {key: value for key, value in data.items() if value is not None or key not in omitted}


@given(specs)
def test_the_stored_dict_is_each_field_in_declared_order(spec):
    stored = spec.to_dict()
    assert stored == _field_by_field(spec) and list(stored) == list(_field_by_field(spec))


@given(specs)
def test_the_stored_dict_reads_back_as_the_same_spec(spec):
    assert JobSpec.from_dict(spec.to_dict()) == spec
