"""What a signed payload must hold before the intake acts on it, and the object it is about.

GitHub signed the bytes, so a payload without the fields its event has is a bug or a forgery of
shape, never worth a redelivery: `Malformed` (answered 400). `trigger_key` names the comment,
review or item (and, for a label or an assignment, which one and when) a delivery is about: a
replay of the same signed body under a new delivery id names the same object.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from bot.errors import BotError

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


def trigger_key(event: str, data: dict[str, Any]) -> str:
    """The object the delivery is about, the same for every delivery of the same signed body."""
    action = data.get("action")
    for name in ("comment", "review", "check_suite", "workflow_run"):
        item = data.get(name)
        if isinstance(item, dict) and item.get("id") is not None:
            return f"{event}.{action}:{name}:{item['id']}"
    alert = data.get("alert")
    if isinstance(alert, dict) and alert.get("number") is not None:  # numbered per repository
        return f"{event}.{action}:alert:{(data.get('repository') or {}).get('id')}:{alert['number']}"
    item = data.get("issue") or data.get("pull_request") or {}
    which = ((data.get("label") or {}).get("name") or (data.get("assignee") or {}).get("login")
             or (data.get("requested_reviewer") or {}).get("login") or "")
    # a label or an assignment can be made again later: its time tells the two apart
    return f"{event}.{action}:item:{item.get('id')}:{which}:{item.get('updated_at')}"
