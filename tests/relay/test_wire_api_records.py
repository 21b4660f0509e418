"""The wire APIs' registry (bot/relay/wire_api.py): a record clashing with another is refused, a fact
a record leaves out fails closed, and only a path some record declares is routed."""
from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.credentials.resolve import kinds_for
from bot.relay import apis, body_policy, reservation, wire_api
from bot.relay.usage import UsageTap
from bot.relay.wire_api import ModelPath, Path, WireApi
from bot.settings.keytest import KeyTest, cheapest_call, try_key, upstream_for
from tests.entry_settings import current


def _error(status: int, message: str, code: str) -> dict[str, Any]:
    return {"failure": {"status": status, "message": message}}


BARE = WireApi(name="bare", key_header="x-api-key", providers={"barecloud": "https://bare.invalid"},
               error=_error, paths=(Path("POST", b"/bare/v1/go"),))


@pytest.fixture
def registered() -> Iterator[None]:
    """BARE registered for one test; the registry as it was afterwards."""
    tables = (wire_api._REGISTRY, wire_api._ROOTS, wire_api.DEFAULT_BASE, wire_api.KEY_HEADER)
    kept = [dict(table) for table in tables]
    wire_api.register(BARE)
    yield
    for table, was in zip(tables, kept, strict=True):
        table.clear()
        table.update(was)
    wire_api._routes.cache_clear()


def test_a_record_whose_key_header_the_relay_does_not_strip_is_refused():
    with pytest.raises(ValueError, match="does not strip 'x-bare-key'"):
        wire_api.register(WireApi(name="odd", key_header="x-bare-key", providers={}, error=_error))
    assert "odd" not in wire_api.names()


def test_a_record_claiming_another_apis_path_is_refused():
    with pytest.raises(ValueError, match="is another API's"):
        wire_api.register(WireApi(name="thief", key_header="authorization", providers={}, error=_error,
                                  paths=(Path("POST", b"/v1/responses"),)))
    assert "thief" not in wire_api.names()


def test_a_record_sending_a_known_providers_key_elsewhere_is_refused():
    with pytest.raises(ValueError, match="takes its key in 'authorization'"):
        wire_api.register(WireApi(name="twist", key_header="x-api-key", providers={"openai": "https://api.openai.com"},
                                  error=_error))
    assert "twist" not in wire_api.names()


def test_a_record_placing_a_known_provider_elsewhere_is_refused():
    with pytest.raises(ValueError, match="is at https://api.openai.com"):
        wire_api.register(WireApi(name="moved", key_header="authorization", providers={"openai": "https://x.invalid"},
                                  error=_error))


def test_an_unknown_api_is_named_with_the_known_ones():
    with pytest.raises(KeyError, match="unknown wire API 'nope'; known: anthropic, chat, gemini, responses"):
        wire_api.get("nope")


def test_a_record_registered_late_is_routed_and_its_provider_served(registered):
    route = apis.route("POST", b"/bare/v1/go")
    assert route == apis.Route("bare", "bare")
    assert apis.serves("barecloud", route) and not apis.serves("openai", route)
    assert (apis.DEFAULT_BASE["barecloud"], apis.KEY_HEADER["barecloud"]) == ("https://bare.invalid", "x-api-key")


def test_a_record_without_a_body_grammar_has_every_body_refused(registered):
    with pytest.raises(body_policy.BodyRefused) as refused:
        body_policy.check("bare", b'{"model": "m"}', [], web_access=True)
    assert (refused.value.status, refused.value.outcome) == (400, "refused:unreadable")


def test_a_record_without_a_usage_reading_reads_no_usage(registered):
    tap = UsageTap("bare", "application/json")
    tap.feed(json.dumps({"model": "m", "usage": {"input_tokens": 5, "output_tokens": 5}}).encode())
    assert tap.result() == (None, None)


def test_a_record_without_a_hold_holds_the_largest_output(registered):
    held = reservation.ceiling("bare", json.dumps({"max_tokens": 5, "limit": 5}).encode())
    assert held.output_tokens == reservation.DEFAULT_MAX_OUTPUT


def test_a_record_without_a_key_test_has_no_key_of_its_providers_tested(registered):
    assert cheapest_call("barecloud") is None
    assert cheapest_call("anthropic") is not None


def test_a_refusal_is_answered_in_the_records_error_format(registered):
    assert json.loads(apis.error_body("bare", 404, "no")) == {"failure": {"status": 404, "message": "no"}}


def _declared(method: str, raw_path: bytes) -> bool:
    return any(path.method == method and (path.path == raw_path if isinstance(path, Path)
                                          else isinstance(path, ModelPath) and path.pattern.match(raw_path))
               for api in wire_api.records() for path in api.paths)


_PATHS = st.one_of(st.binary(max_size=80),
                   st.sampled_from([b"/v1/messages", b"/v1/responses", b"/v1/chat/completions", b"/v1/messages/x",
                                    b"/backend-api/codex/models", b"/v1beta/models/m:generateContent",
                                    b"/v1beta/models/../x:countTokens", b"/v1/models/gemini-2.5-flash:countTokens",
                                    b"/v1/responses/", b"/V1/responses"]),
                   st.builds(lambda model, verb: b"/v1beta/models/" + model + b":" + verb, st.binary(max_size=20),
                             st.sampled_from([b"generateContent", b"countTokens", b"deleteModel"])))


@given(st.sampled_from(["POST", "GET", "PUT", "DELETE"]), _PATHS)
def test_only_a_path_some_record_declares_is_routed(method, raw_path):
    found = apis.route(method, raw_path)
    assert (found is not None) == bool(_declared(method, raw_path))
    if found is not None:
        assert found.wire in wire_api.names()


@given(st.binary(max_size=80), st.sampled_from([400, 401, 404, 413, 415, 429, 500, 502, 529]), st.text(max_size=40))
def test_every_refused_path_is_answered_as_json_in_a_known_apis_format(raw_path, status, message):
    api = apis.api_of_path(raw_path)
    assert api in wire_api.names()
    assert message in _strings(json.loads(apis.error_body(api, status, message)))


def _strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return [value] if isinstance(value, str) else []


def test_a_key_of_a_provider_whose_api_declares_no_key_test_is_said_untestable():
    """An OpenCode auth.json holding one OpenRouter key is relayed to OpenRouter, whose APIs declare
    no cheapest call: the settings page says so instead of failing."""
    kind = next(k for k in kinds_for("opencode") if k.kind == "auth_json")
    value = json.dumps({"openrouter": {"type": "api", "key": "sk-or-v1-0123456789"}})
    assert upstream_for(kind, value, current()).provider == "openrouter"
    found = asyncio.run(try_key(kind, value, current()))
    assert found == KeyTest(False, "A OpenCode auth.json cannot be tested from this page; the next run will tell.")
