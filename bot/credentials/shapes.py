"""What each credential kind looks like, checked before a pasted value is stored.

A value of one kind pasted under another (an Anthropic API key under "Claude subscription token")
would be stored, resolved first and then rejected by the provider in the middle of someone's run.
The shapes are the providers' published prefixes; the messages name the kind the value looks like
and never repeat the value.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from adapters import facts
from bot.credentials.resolve import InvalidCredential, Kind, normalise


class ShapeMismatch(InvalidCredential):
    """A pasted value does not have the shape of the chosen credential kind."""


@dataclass(frozen=True)
class Shape:
    label: str  # what a value of this shape is, for messages
    pattern: re.Pattern[str]
    looks: str  # how a value of this shape looks, for messages: "starts with …"


SHAPES = {
    facts.ANTHROPIC_OAUTH: Shape("Claude subscription token", re.compile(r"^sk-ant-oat\d\d-[A-Za-z0-9_\-]{20,}$"),
                             "starts with sk-ant-oat01-"),
    facts.ANTHROPIC_API: Shape("Anthropic API key", re.compile(r"^sk-ant-api\d\d-[A-Za-z0-9_\-]{20,}$"),
                           "starts with sk-ant-api03-"),
    facts.OPENAI_API: Shape("OpenAI API key", re.compile(r"^sk-(?!ant-)[A-Za-z0-9_\-]{16,}$"),
                        "starts with sk-proj- or sk-"),
    facts.GEMINI_API: Shape("Gemini API key", re.compile(r"^AIza[A-Za-z0-9_\-]{35}$"),
                        "starts with AIza and is 39 characters long"),
}


def looks_like(value: str) -> str | None:
    """The label of the shape `value` has, if any."""
    return next((shape.label for shape in SHAPES.values() if shape.pattern.match(value)), None)


def check_shape(kind: Kind, value: str) -> str:
    """The value as it will be stored, or ShapeMismatch naming what it looks like instead."""
    value = normalise(kind, value) if not kind.json_file else value.strip()
    if kind.json_file:
        return _check_json(kind, value)
    shape = SHAPES.get(kind.shape or "")
    if shape is None:  # an agent that declares no shape for a key gets none stored unchecked
        raise ShapeMismatch(f"{kind.label} cannot be checked: the {kind.agent} adapter declares no key shape for it.")
    if shape.pattern.match(value):
        return value
    other = looks_like(value)
    if other:
        raise ShapeMismatch(f"This looks like {with_article(other)}, not {with_article(kind.label)}. "
                            f"Choose \u201c{other}\u201d in the list, or paste the {kind.label}.")
    raise ShapeMismatch(f"This is not {with_article(kind.label)}: {with_article(kind.label)} {shape.looks}.")


def _check_json(kind: Kind, value: str) -> str:
    other = looks_like(value)
    if other:
        raise ShapeMismatch(f"This looks like {with_article(other)}, not the content of a file. "
                            f"Choose \u201c{other}\u201d in the list, or paste the whole {kind.label}.")
    value = normalise(kind, value)
    check = kind.json_check
    problem = check(json.loads(value)) if check else None
    if problem:
        raise ShapeMismatch(f"This is not {with_article(kind.label)}: {problem}")
    return value


def with_article(label: str) -> str:
    return f"{'an' if label[0].lower() in 'aeiou' else 'a'} {label}"
