"""The job spec's stored shape is read from its dataclasses' fields, written once: a field's type
gives the JSON types its stored value may hold."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from bot.intake import spec
from bot.intake.grammar import Command


@dataclass(frozen=True)
class Probe:
    text: str
    number: int | None
    flag: bool
    kind: Literal["a", "b"]
    names: tuple[str, ...]
    command: Command
    mapping: Mapping[str, Any] | None


def test_a_fields_type_gives_the_json_types_its_stored_value_may_hold():
    assert spec.json_shape(Probe) == {"text": (str,), "number": (int, type(None)), "flag": (bool,),
                                      "kind": (str,), "names": (list,), "command": (dict,),
                                      "mapping": (dict, type(None))}


def test_the_job_specs_stored_shape_is_its_fields():
    assert list(spec.json_shape(spec.JobSpec)) == [f for f in spec.JobSpec.__dataclass_fields__]
