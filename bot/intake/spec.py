"""`JobSpec`: what a job is about, as the intake decided it and the queue stores it.

The JSON is the jobs table's `spec` column, with the keys the intake has always written, so a row
queued by an earlier version loads. Reading is strict: an unknown key, a value of the wrong type
or a missing field is a `SpecError` naming it, never a job run on a guess.

    spec = JobSpec.from_json(row["spec"])    # SpecError for a row this version cannot read
    text = spec.to_json()
"""
from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from bot.errors import BotError
from bot.intake.grammar import Command

_NONE = type(None)
_REQUIRED = ("repo", "number", "author", "command")
_TARGET: dict[str, tuple[type, ...]] = {
    "type": (str,), "id": (int,), "thread": (int, _NONE), "path": (str, _NONE), "line": (int, _NONE)}
# written only when set, as the intake always has: their absence means None
_OMITTED_WHEN_NONE = ("reply", "automatic", "stopped_job", "coalesced")


class SpecError(BotError, ValueError):
    """A stored job spec this version cannot read: the message names the field."""


# What a reply job says: a plain reply, the not-allowed notice, or (rows an intake queued before
# stops were checked) "stop". A stored spec naming another is refused.
ReplyKind = Literal["help", "status", "unknown_agent", "not_allowed", "stop"]


@dataclass(frozen=True)
class Automatic:
    """What called the bot when no comment did (bot/intake/triggers.py)."""

    kind: str  # a trigger's name (bot/trigger_table.py)
    detail: str = ""  # the label's name, for a label
    draft: bool = False  # the pull request is a draft


@dataclass(frozen=True)
class JobSpec:
    repo: str
    number: int
    author: str  # who asked, or who caused the automatic trigger
    command: Command
    repo_id: int | None = None
    installation_id: int | None = None  # None in the Action: the workflow's token acts
    author_id: int | None = None
    author_type: str = "User"
    association: str | None = "NONE"  # the payload's author_association: a pre-filter only
    is_pr: bool = False
    title: str | None = ""
    target: Mapping[str, Any] | None = None  # the comment, review comment, review or item answered
    trigger_key: str | None = None  # the object the delivery is about (bot/intake/payload.py)
    event: str | None = None
    action: str | None = None
    delivery: str | None = None
    reply: ReplyKind | None = None  # a reply job's kind; None: the job acts
    automatic: Automatic | None = None
    stopped_job: int | None = None  # only in rows an older intake queued for `@bot stop`
    coalesced: int | None = None  # the pushes one waiting push review stands for (bot/web/review_push.py)

    @property
    def review_thread(self) -> int | None:
        """The review-comment thread to answer in, when the request came from one."""
        target = self.target or {}
        return target.get("thread") if target.get("type") == "review_comment" else None

    def to_dict(self) -> dict[str, Any]:
        # the instance's own attributes, not `dataclasses.asdict` nor a getattr per field (once per
        # delivery; about 1.6 us less): a frozen dataclass's __init__ sets each field once, in order,
        # and every value is a scalar or a tuple
        data = dict(self.__dict__)
        command = self.command
        data["command"] = {**command.__dict__, "agents": list(command.agents)}
        if self.target is not None:
            data["target"] = dict(self.target)
        data["automatic"] = dict(self.automatic.__dict__) if self.automatic else None
        for key in _OMITTED_WHEN_NONE:
            if data[key] is None:
                del data[key]
        return data

    def to_json(self) -> str:
        return orjson.dumps(self.to_dict()).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> JobSpec:
        try:
            data = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"job spec is not JSON: {exc}") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data: object) -> JobSpec:
        top, command, automatic = _read(data)
        return cls(**{**top, "command": Command(**{**command, "agents": tuple(command.get("agents", []))}),
                      "automatic": Automatic(**automatic) if automatic else None})

    @staticmethod
    def check_readable(data: object) -> None:
        """SpecError unless `from_dict(data)` reads it: every check it makes, without building the
        spec (the intake asks this of each spec it stores, once per delivery)."""
        _read(data)


def _read(data: object) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """`data`'s top level, command and automatic trigger (None when absent), each checked."""
    top = _checked(data, _TOP, "")
    for name in _REQUIRED:
        if name not in top:
            raise SpecError(f"job spec lacks {name!r}")
    command = _checked(top["command"], _COMMAND, "command.")
    if "kind" not in command:
        raise SpecError("job spec lacks 'command.kind'")
    if not all(isinstance(agent, str) for agent in command.get("agents", [])):
        raise SpecError("job spec's 'command.agents' holds a value that is not text")
    if top.get("target") is not None:
        _checked(top["target"], _TARGET, "target.")
    automatic = top.get("automatic")
    if not automatic:
        return top, command, None
    if "kind" not in _checked(automatic, _AUTOMATIC, "automatic."):
        raise SpecError("job spec lacks 'automatic.kind'")
    return top, command, automatic


_SCALARS: dict[object, type] = {str: str, int: int, bool: bool, tuple: list, Literal: str}


def _json_type(hint: object) -> type:
    """The JSON type a field of type `hint` is stored as: a nested dataclass or a mapping as an
    object, a tuple as an array, a Literal of texts as text."""
    origin = typing.get_origin(hint) or hint
    if origin is Literal and not all(isinstance(value, str) for value in typing.get_args(hint)):
        raise TypeError(f"a Literal field holds texts only, not {hint!r}")
    if dataclasses.is_dataclass(origin) or origin is Mapping:
        return dict
    if origin in _SCALARS:
        return _SCALARS[origin]
    raise TypeError(f"no JSON type for a field of type {hint!r}")


def json_shape(cls: type) -> dict[str, tuple[type, ...]]:
    """Each field of the dataclass `cls`, with the JSON types its stored value may hold (`bool` is
    not a number; None is null)."""
    hints = typing.get_type_hints(cls)
    shape: dict[str, tuple[type, ...]] = {}
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
            shape[field.name] = tuple(_json_type(a) if a is not _NONE else _NONE for a in typing.get_args(hint))
        else:
            shape[field.name] = (_json_type(hint),)
    return shape


def _members(hint: object) -> tuple[object, ...]:
    """The types a union holds, or the type alone."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return typing.get_args(hint)
    return (hint,)


def json_choices(cls: type) -> dict[str, frozenset[str]]:
    """Each field of the dataclass `cls` whose type is a Literal of texts (alone or with None), with
    the texts it may hold: any other stored value is refused."""
    hints = typing.get_type_hints(cls)
    choices: dict[str, frozenset[str]] = {}
    for field in dataclasses.fields(cls):
        hint = hints[field.name]
        literal = [value for member in _members(hint) if typing.get_origin(member) is Literal
                   for value in typing.get_args(member)]
        if literal:
            choices[field.name] = frozenset(literal)
    return choices


_TOP = json_shape(JobSpec)
_COMMAND = json_shape(Command)
_AUTOMATIC = json_shape(Automatic)
_CHOICES = {"": json_choices(JobSpec), "command.": json_choices(Command), "target.": {},
            "automatic.": json_choices(Automatic)}


def _checked(data: object, shape: dict[str, tuple[type, ...]], prefix: str) -> dict[str, Any]:
    """`data` as a dict whose every key is in `shape`, with a value of one of its types."""
    if not isinstance(data, dict):
        raise SpecError(f"job spec{' ' + prefix.rstrip('.') if prefix else ''} is not a JSON object")
    choices_of = _CHOICES.get(prefix, {})
    for key, value in data.items():
        if key not in shape:
            raise SpecError(f"job spec has an unknown field '{prefix}{key}' (known: {', '.join(shape)})")
        if type(value) not in shape[key]:
            allowed = " or ".join("null" if t is _NONE else t.__name__ for t in shape[key])
            raise SpecError(f"job spec's '{prefix}{key}' is {type(value).__name__}, not {allowed}")
        if (choices := choices_of.get(key)) is not None and isinstance(value, str) \
                and value not in choices:
            raise SpecError(f"job spec's '{prefix}{key}' is {value[:40]!r}, not one of {', '.join(sorted(choices))}")
    return data
