"""The fake provider (tests/fakes/provider.py) speaks the four wire APIs by name, on its own routing
table (`ROUTES`): it is the relay's independent witness, so it does not read the records. This
holds the two together: every path a built-in record forwards, the fake answers in that API's
format, and every route of the fake is a path some record of the same API forwards."""
from __future__ import annotations

import importlib
import json
import pkgutil

import pytest

from bot.relay import apis, wire_api, wire_apis
from bot.relay.wire_api import ModelPath, Path
from tests.fakes import provider

MODEL = "gemini-2.5-flash"


def _builtin() -> list[wire_api.WireApi]:
    """The records of bot/relay/wire_apis/ (not a test's record registered in this process)."""
    found = [getattr(importlib.import_module(f"{wire_apis.__name__}.{module.name}"), "WIRE_API", None)
             for module in pkgutil.iter_modules(wire_apis.__path__)]
    return [record for record in found if isinstance(record, wire_api.WireApi)]


RECORDS = _builtin()


def _examples(path: ModelPath) -> list[str]:
    """The concrete paths a ModelPath forwards, one per verb (as `shown` spells them)."""
    head, verbs = path.shown.split(":", 1)
    return [head.replace("<model>", MODEL) + ":" + verb for verb in verbs.split("|")]


def _posts(record: wire_api.WireApi) -> list[str]:
    paths = [p.path.decode() for p in record.paths if isinstance(p, Path) and p.method == "POST"]
    return paths + [example for p in record.paths if isinstance(p, ModelPath) for example in _examples(p)]


def test_the_fake_speaks_exactly_the_builtin_records_apis():
    assert {api for _, api in provider.ROUTES} == {record.name for record in RECORDS}


@pytest.mark.parametrize("record", RECORDS, ids=[record.name for record in RECORDS])
def test_every_path_a_record_forwards_the_fake_answers_in_that_api(record):
    for path in _posts(record):
        routed = apis.route("POST", path.encode())
        assert routed is not None and routed.wire == record.name, f"{path} is not the record's own"
        assert provider._api_of(path) == record.name, f"the fake does not answer POST {path} as {record.name}"


@pytest.mark.parametrize(("prefix", "api"), provider.ROUTES, ids=[prefix for prefix, _ in provider.ROUTES])
def test_every_route_of_the_fake_is_a_path_its_apis_record_forwards(prefix, api):
    [record] = [record for record in RECORDS if record.name == api]
    exact = [path for path in _posts(record) if path.startswith(prefix)]
    by_model = [p for p in record.paths if isinstance(p, ModelPath)
                and any(p.pattern.match(f"{prefix}{MODEL}:{verb}".encode()) for verb in p.shown.split(":", 1)[1].split("|"))]
    assert exact or by_model, f"the fake answers {prefix}… as {api}, but no path of that record starts so"


def _shape(body: dict) -> dict:
    return {key: sorted(value) if isinstance(value, dict) else type(value).__name__ for key, value in body.items()}


@pytest.mark.parametrize("record", RECORDS, ids=[record.name for record in RECORDS])
def test_the_fakes_error_of_an_api_has_the_shape_of_its_records_error(record):
    """The relay answers its refusals in the record's error object and the fake answers provider
    errors in its own: a CLI must read the two alike."""
    for status in (400, 401, 403, 404, 429, 500, 529):
        fake = json.loads(provider._error_body(record.name, status, "refused"))
        assert _shape(fake) == _shape(record.error(status, "refused", "relay")), (record.name, status)
