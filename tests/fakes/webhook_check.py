"""Checks a webhook payload against GitHub's published webhook schemas (@octokit/webhooks-schemas,
installed into tests/specs by `make specs`), by its event and action."""
from __future__ import annotations

import functools
import json

from jsonschema import Draft7Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from tests.fakes.openapi_check import WEBHOOK_SCHEMAS

_BASE = "urn:github-webhooks"


@functools.cache
def _schemas() -> tuple[dict, Registry]:
    document = json.loads(WEBHOOK_SCHEMAS.read_text())
    return document["definitions"], Registry().with_resource(
        _BASE, Resource.from_contents(document, default_specification=DRAFT7))


@functools.cache
def _validator(definition: str) -> Draft7Validator:
    return Draft7Validator({"$ref": f"{_BASE}#/definitions/{definition}"}, registry=_schemas()[1])


def webhook_problems(event: str, payload: dict) -> list[str]:
    """Every way `payload`, delivered as `event`, is off the schema of its event and action."""
    definitions = _schemas()[0]
    action = payload.get("action")
    # an event with actions has one definition per action; one without (ping) has `event$event`
    names = [f"{event}${action}", f"{event}$event"]
    name = next((n for n in names if n in definitions), None)
    if name is None:
        return [f"{event} (action {action!r}): no schema for this event and action"]
    problems = []
    for error in _validator(name).iter_errors(payload):
        where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        problems.append(f"{name} at {where}: {error.message[:300]}")
    return problems
