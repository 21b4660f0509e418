"""What a signed payload must hold before the intake acts on it, and the object it is about.

GitHub signed the bytes, so a payload without the fields its event has is a bug or a forgery of
shape, never worth a redelivery: `Malformed` (answered 400). `read_payload` is the door: the parts
its event is read for (bot/intake/github_payload.py) have their declared types, checked by readers
made once from the TypedDicts, so the declaration and the check cannot disagree; what is not read
is not checked. `require_shape` checks the trigger the intake made of it. `trigger_key` names the comment,
review or item (and, for a label or an assignment, which one and when) a delivery is about: a
replay of the same signed body under a new delivery id names the same object.
"""
from __future__ import annotations

import typing
from collections.abc import Callable
from types import UnionType
from typing import Any, TypeVar, cast

from bot.errors import BotError
from bot.intake import github_payload
from bot.intake.github_payload import Item, Payload

T = TypeVar("T")
# what the worker later reads of a trigger, and the type it must have
_SHAPE: dict[str, tuple[type, ...]] = {
    "repo": (str,), "number": (int,), "author": (str,), "author_type": (str,),
    "installation_id": (int, type(None)), "author_id": (int, type(None)), "title": (str, type(None)),
}
_TARGET_SHAPE: dict[str, tuple[type, ...]] = {"type": (str,), "id": (int,)}


class Malformed(BotError, ValueError):
    """A signed payload that lacks a field its event has, or holds one of the wrong type."""


def parsed(read: Callable[[], T]) -> T:
    """`read()`, with a missing or mistyped field of the payload reported as Malformed."""
    try:
        return read()
    except (KeyError, TypeError, AttributeError, IndexError) as exc:
        raise Malformed(f"{type(exc).__name__}: {exc}") from None


def read_payload(event: str, data: dict[str, Any]) -> Payload:
    """`data` as the payload of `event`, once every part the intake reads of it has its declared
    type; Malformed otherwise. Reads nothing else."""
    for name, check in _READERS.get(event, _OTHERS):
        value = data.get(name, _ABSENT)
        if value is not _ABSENT:
            check(value)
    return cast(Payload, data)


Check = Callable[[object], None]
_ABSENT = object()
_NONE = type(None)
_JSON_NAMES = {_NONE: "null", dict: "an object", list: "a list"}


def _named(kind: type) -> str:
    return _JSON_NAMES.get(kind, kind.__name__)


def _reader(hint: object, where: str) -> Check:
    """The check of a value declared `hint` (a TypedDict, a list of one, an object, a scalar;
    each may be `| None`) at `where`, made once."""
    members = typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)
    nullable = _NONE in members
    [kind] = [member for member in members if member is not _NONE]
    if typing.is_typeddict(kind):
        return _object_reader(kind, where, nullable)
    if typing.get_origin(kind) is list:
        return _list_reader(_reader(typing.get_args(kind)[0], f"{where}[]"), where, nullable)
    allowed = (typing.get_origin(kind) or kind, *((_NONE,) if nullable else ()))
    if not all(isinstance(t, type) for t in allowed):
        raise TypeError(f"{where}: {hint} has no check")
    return _scalar_reader(cast(tuple[type, ...], allowed), where)


def _object_reader(kind: object, where: str, nullable: bool) -> Check:
    fields = tuple((name, _reader(hint, f"{where}.{name}"))
                   for name, hint in typing.get_type_hints(kind).items())

    def check(value: object) -> None:
        if type(value) is not dict:
            if value is None and nullable:
                return
            raise Malformed(f"{where} is {_named(type(value))}, not an object")
        for name, inner in fields:
            if name in value:
                inner(value[name])
    return check


def _list_reader(item: Check, where: str, nullable: bool) -> Check:
    def check(value: object) -> None:
        if type(value) is not list:
            if value is None and nullable:
                return
            raise Malformed(f"{where} is {_named(type(value))}, not a list")
        for each in value:
            item(each)
    return check


def _scalar_reader(allowed: tuple[type, ...], where: str) -> Check:
    def check(value: object) -> None:
        if type(value) not in allowed:
            raise Malformed(f"{where} is {_named(type(value))}, not {' or '.join(map(_named, allowed))}")
    return check


_PARTS = typing.get_type_hints(Payload)
_READERS = {event: tuple((name, _reader(_PARTS[name], name)) for name in names)
            for event, names in github_payload.READ.items()}
_OTHERS = tuple((name, _reader(_PARTS[name], name)) for name in github_payload.OTHERS)


def require_shape(trigger: dict[str, Any]) -> dict[str, Any]:
    """The trigger, once every field the worker reads has its type (`bool` is not a number)."""
    _check(trigger, _SHAPE, "")
    target = trigger.get("target")
    _check(target if isinstance(target, dict) else {}, _TARGET_SHAPE, "target.")
    body = trigger.get("body")
    if body is not None and not isinstance(body, str):
        raise Malformed("body is not text")
    return trigger


def _check(item: dict[str, Any], shape: dict[str, tuple[type, ...]], prefix: str) -> None:
    for name, types in shape.items():
        value = item.get(name)
        if type(value) not in types:
            raise Malformed(f"{prefix}{name} is {type(value).__name__}, not {' or '.join(t.__name__ for t in types)}")


def trigger_key(event: str, data: Payload) -> str:
    """The object the delivery is about, the same for every delivery of the same signed body. A
    redelivery's job is found by it alone (bot/service/store.py:enqueue_delivery), so a change to
    what it names lets through the redelivery of a delivery queued before the change."""
    action = data.get("action")
    for name in ("comment", "review", "check_suite", "workflow_run"):
        found = data.get(name)
        if isinstance(found, dict) and found.get("id") is not None:
            return f"{event}.{action}:{name}:{found['id']}"
    alert = data.get("alert")
    if isinstance(alert, dict) and alert.get("number") is not None:  # numbered per repository
        return f"{event}.{action}:alert:{(data.get('repository') or {}).get('id')}:{alert['number']}"
    item: Item = data.get("issue") or data.get("pull_request") or {}
    which = ((data.get("label") or {}).get("name") or (data.get("assignee") or {}).get("login")
             or (data.get("requested_reviewer") or {}).get("login") or "")
    # a label or an assignment can be made again later: its time tells the two apart
    return f"{event}.{action}:item:{item.get('id')}:{which}:{item.get('updated_at')}"
