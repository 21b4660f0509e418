"""The intake's typed dictionaries (bot/intake/github_payload.py) held to GitHub's published webhook
schemas (@octokit/webhooks-schemas in tests/specs): for every action of every event the intake
reads, each part it reads may hold only types its declaration allows (so the door never refuses a
payload GitHub may send), and each field it declares is one GitHub sends (a misspelt field would
never be read nor checked)."""
from __future__ import annotations

import functools
import json
import typing
from collections.abc import Iterator
from types import UnionType

from bot.intake import github_payload
from tests.fakes.openapi_check import WEBHOOK_SCHEMAS

ANY = frozenset({"object", "array", "string", "integer", "number", "boolean", "null"})
_JSON = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}
# (event, path): why the schema's types are wider than GitHub's values
SCHEMA_QUIRKS = {("workflow_run", "workflow_run.pull_requests.[].number"):
                 "the schema says `number`; a pull request's number is an integer (octokit's recorded one holds 2)"}
# (TypedDict, field): why the webhook schema lacks a field GitHub sends
NOT_IN_THE_SCHEMA = {("Rule", "security_severity_level"):
                     "a code scanning rule's security severity: in GitHub's REST description of the alert "
                     "(tests/specs/.../api.github.com.json), not in webhooks-schemas 7.6.1"}


@functools.cache
def _definitions() -> dict:
    return json.loads(WEBHOOK_SCHEMAS.read_text())["definitions"]


def _deref(node: dict) -> dict:
    while "$ref" in node:
        node = _definitions()[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _types(node: dict) -> set[str]:
    """The JSON types a schema allows (`oneOf`: any member's; `allOf`: every member's)."""
    node = _deref(node)
    if "oneOf" in node or "anyOf" in node:
        return set().union(*(_types(sub) for sub in node.get("oneOf", []) + node.get("anyOf", [])))
    if "allOf" in node:
        return set(ANY).intersection(*(_types(sub) for sub in node["allOf"]))
    if "type" in node:
        declared = node["type"] if isinstance(node["type"], list) else [node["type"]]
        return set(declared) | ({"integer"} if "number" in declared else set())
    if "enum" in node or "const" in node:
        return {_JSON[type(value)] for value in node.get("enum", [node.get("const")])}
    return set(ANY)


def _step(node: dict | None, step: str) -> dict | None:
    """The schema of a property (`[]`: a list's items), through `$ref`, `oneOf` and `allOf`."""
    if node is None:
        return None
    node = _deref(node)
    for combined in ("oneOf", "anyOf", "allOf"):
        if combined in node:
            found = [inner for sub in node[combined] if (inner := _step(sub, step)) is not None]
            return {"oneOf" if combined != "allOf" else "allOf": found} if found else None
    return node.get("items") if step == "[]" else node.get("properties", {}).get(step)


def _kinds(hint: object) -> set[str]:
    members = typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)
    return {"object" if typing.is_typeddict(member) or typing.get_origin(member) is dict
            else "array" if typing.get_origin(member) is list else _JSON[typing.cast(type, member)]
            for member in members}


def _declared(hint: object, path: tuple[str, ...], owner: tuple[str, str]) -> Iterator[tuple[tuple[str, ...], object, tuple[str, str]]]:
    """Every declared place under `hint`: its path, its declaration, (its TypedDict, its field)."""
    yield path, hint, owner
    [kind] = [m for m in (typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)) if m is not type(None)]
    if typing.is_typeddict(kind):
        for name, inner in typing.get_type_hints(kind).items():
            yield from _declared(inner, (*path, name), (kind.__name__, name))
    elif typing.get_origin(kind) is list:
        yield from _declared(typing.get_args(kind)[0], (*path, "[]"), owner)


def _places() -> Iterator[tuple[str, str, tuple[str, ...], object, tuple[str, str], dict | None]]:
    """(event, action, path, declaration, owner, the schema there or None) for every read place."""
    parts = typing.get_type_hints(github_payload.Payload)
    for event, names in github_payload.READ.items():
        actions = [name for name in _definitions() if name.startswith(f"{event}$")]
        assert actions, f"no webhook schema for {event}"
        for part in names:
            for path, hint, owner in _declared(parts[part], (part,), ("Payload", part)):
                for action in actions:
                    node: dict | None = _definitions()[action]
                    for step in path:
                        node = _step(node, step)
                    yield event, action, path, hint, owner, node


def test_every_type_github_publishes_for_a_read_part_is_one_its_declaration_allows():
    wider = {(event, ".".join(path)): (action, sorted(_types(node)), sorted(_kinds(hint)))
             for event, action, path, hint, _, node in _places()
             if node is not None and _types(node) - _kinds(hint)}
    assert {place: found for place, found in wider.items() if place not in SCHEMA_QUIRKS} == {}
    assert set(SCHEMA_QUIRKS) <= set(wider), "a quirk the schema no longer has: remove it"


def test_every_field_the_declarations_name_is_one_github_sends_for_an_event_read_for_it():
    seen: dict[tuple[str, str], bool] = {}
    for *_, owner, node in _places():
        seen[owner] = seen.get(owner, False) or node is not None
    assert sorted(owner for owner, found in seen.items() if not found) == sorted(NOT_IN_THE_SCHEMA)
