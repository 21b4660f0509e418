"""The relay reads every body it forwards: provider-run tools and connectors pass only when the
repository turned web access on (and are recorded then), what it cannot read is refused in the
called API's own error format, and a key hidden in the query is found after percent-decoding."""
from __future__ import annotations

import gzip
import json
import threading

import httpx
import pytest

from tests.fakes.provider import say
from tests.relay.conftest import REAL_KEY, header, post

FUNCTION = {"name": "read_file", "description": "read", "input_schema": {"type": "object"}}
CHAT_FUNCTION = {"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}
RESPONSES_FUNCTION = {"type": "function", "name": "read_file", "parameters": {"type": "object"}}
GEMINI_FUNCTIONS = {"functionDeclarations": [{"name": "read_file"}]}
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
GEMINI_BODY = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}


def _anthropic(tool: dict) -> tuple[str, str, dict]:
    return "anthropic", "/v1/messages", {"model": "claude-opus-4-8", "max_tokens": 100, "tools": [FUNCTION, tool],
                                         "messages": [{"role": "user", "content": "hi"}]}


def _responses(tool: dict) -> tuple[str, str, dict]:
    return "openai", "/v1/responses", {"model": "gpt-5.5", "stream": True, "tools": [RESPONSES_FUNCTION, tool],
                                       "input": [{"type": "message", "role": "user", "content": "hi"}]}


def _gemini(tool: dict) -> tuple[str, str, dict]:
    return "google", GEMINI_PATH, {"contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                                   "tools": [GEMINI_FUNCTIONS, tool]}


PROVIDER_TOOLS = {
    "anthropic web_search": _anthropic({"type": "web_search_20250305", "name": "web_search"}),
    "anthropic web_fetch": _anthropic({"type": "web_fetch_20250910", "name": "web_fetch"}),
    "anthropic code_execution": _anthropic({"type": "code_execution_20250825", "name": "code_execution"}),
    "responses web_search": _responses({"type": "web_search"}),
    "responses web_search_preview": _responses({"type": "web_search_preview"}),
    "responses file_search": _responses({"type": "file_search", "vector_store_ids": ["vs_1"]}),
    "responses code_interpreter": _responses({"type": "code_interpreter", "container": {"type": "auto"}}),
    "responses computer_use": _responses({"type": "computer_use_preview", "display_width": 1, "display_height": 1,
                                          "environment": "browser"}),
    "responses image_generation": _responses({"type": "image_generation"}),
    "gemini googleSearch": _gemini({"googleSearch": {}}),
    "gemini google_search_retrieval": _gemini({"google_search_retrieval": {}}),
    "gemini urlContext": _gemini({"urlContext": {}}),
    "gemini codeExecution": _gemini({"codeExecution": {}}),
}
CONNECTORS = {
    "anthropic mcp_servers": ("anthropic", "/v1/messages", {
        "model": "claude-opus-4-8", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}],
        "mcp_servers": [{"type": "url", "url": "https://attacker.example/mcp", "name": "x"}]}),
    "responses mcp": _responses({"type": "mcp", "server_label": "x", "server_url": "https://attacker.example/mcp"}),
}
BETA = "web-fetch-2025-09-10,interleaved-thinking-2025-05-14,code-execution-2025-08-25,mcp-client-2025-04-04"


def _headers(provider: str, token: str) -> dict:
    return {"anthropic": {"x-api-key": token}, "openai": {"authorization": f"Bearer {token}"},
            "google": {"x-goog-api-key": token}}[provider]


def _tools(body: dict) -> list:
    return body.get("tools") or []


def _policy_events(recorder, run_id) -> list[tuple[str, str]]:
    return [(e["outcome"], e["raw"]) for e in recorder.events(run_id) if e["kind"] == "model_policy"]


@pytest.mark.parametrize("kind", list(PROVIDER_TOOLS))
async def test_a_provider_run_tool_is_dropped_without_web_access_and_the_call_still_answers(kind, fake, relay):
    provider, path, body = PROVIDER_TOOLS[kind]
    fake.script(say("answered without it"))
    async with relay(provider) as r:
        answer = await post(r, path, body, headers=_headers(provider, r.token))
    [seen] = fake.main_requests()
    assert answer.status_code == 200 and "answered without it" in answer.text
    assert seen.provider_tools == [] and _tools(seen.body) == [_tools(body)[0]]


@pytest.mark.parametrize("kind", list(PROVIDER_TOOLS))
async def test_a_provider_run_tool_passes_with_web_access_and_is_recorded(kind, fake, relay, recorder, run_id):
    provider, path, body = PROVIDER_TOOLS[kind]
    fake.script(say("searched"))
    async with relay(provider, web_access=True) as r:
        await post(r, path, body, headers=_headers(provider, r.token))
    [seen] = fake.main_requests()
    assert _tools(seen.body) == _tools(body)
    assert [outcome for outcome, _ in _policy_events(recorder, run_id)] == ["allowed"]


async def test_a_dropped_provider_tool_is_recorded(fake, relay, recorder, run_id):
    provider, path, body = PROVIDER_TOOLS["anthropic web_search"]
    fake.script(say("ok"))
    async with relay(provider) as r:
        await post(r, path, body)
    assert _policy_events(recorder, run_id) == [("dropped", "provider-run tool web_search_20250305")]


async def test_codex_announcing_a_web_tool_in_an_input_item_has_it_dropped(fake, relay):
    body = {"model": "gpt-5.5", "stream": True, "tools": [], "input": [
        {"type": "additional_tools", "tools": [RESPONSES_FUNCTION, {"type": "web_search"}]},
        {"type": "message", "role": "user", "content": "hi"}]}
    fake.script(say("ok"))
    async with relay("openai") as r:
        await post(r, "/v1/responses", body, headers=_headers("openai", r.token))
    assert fake.main_requests()[0].body["input"][0]["tools"] == [RESPONSES_FUNCTION]


async def test_chat_web_search_options_are_dropped_without_web_access(fake, relay):
    body = {"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}], "tools": [CHAT_FUNCTION],
            "web_search_options": {}}
    fake.script(say("ok"))
    async with relay("openai") as r:
        await post(r, "/v1/chat/completions", body, headers=_headers("openai", r.token))
    assert "web_search_options" not in fake.main_requests()[0].body


@pytest.mark.parametrize("kind", list(CONNECTORS))
async def test_a_connector_to_a_remote_mcp_server_is_refused_without_web_access(kind, fake, relay, recorder, run_id):
    provider, path, body = CONNECTORS[kind]
    async with relay(provider) as r:
        answer = await post(r, path, body, headers=_headers(provider, r.token))
    assert answer.status_code == 400 and fake.requests == []
    assert "web access" in json.dumps(answer.json())
    assert [outcome for outcome, _ in _policy_events(recorder, run_id)] == ["refused"]


async def test_beta_headers_enabling_provider_tools_are_stripped_without_web_access(fake, relay):
    fake.script(say("ok"))
    async with relay("anthropic") as r:
        await post(r, *_anthropic({"type": "web_fetch_20250910", "name": "web_fetch"})[1:],
                   headers={"x-api-key": r.token, "anthropic-beta": BETA})
    assert header(fake.main_requests()[0], "anthropic-beta") == "interleaved-thinking-2025-05-14"


async def test_beta_headers_pass_with_web_access(fake, relay):
    fake.script(say("ok"))
    async with relay("anthropic", web_access=True) as r:
        await post(r, *_anthropic({"type": "web_fetch_20250910", "name": "web_fetch"})[1:],
                   headers={"x-api-key": r.token, "anthropic-beta": BETA})
    assert header(fake.main_requests()[0], "anthropic-beta") == BETA


async def test_the_clis_own_tools_and_fields_reach_the_provider_unchanged(fake, relay):
    body = {"model": "claude-opus-4-8", "max_tokens": 100, "tools": [FUNCTION, {"type": "bash_20250124", "name": "bash"}],
            "messages": [{"role": "user", "content": "h\u00e9 \u2603"}], "metadata": {"user_id": "u"}}
    fake.script(say("ok"))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", body)
    assert fake.main_requests()[0].body == body


ERROR_SHAPES = {"anthropic": ("anthropic", "/v1/messages", lambda e: e["type"] == "error" and e["error"]["message"]),
                "chat": ("openai", "/v1/chat/completions", lambda e: e["error"]["message"] and "param" in e["error"]),
                "gemini": ("google", GEMINI_PATH, lambda e: e["error"]["status"] == "INVALID_ARGUMENT")}


@pytest.mark.parametrize("api", list(ERROR_SHAPES))
async def test_a_body_that_is_not_json_is_refused_in_the_apis_error_format(api, fake, relay):
    provider, path, shape = ERROR_SHAPES[api]
    async with relay(provider) as r, httpx.AsyncClient() as client:
        answer = await client.post(r.url + path, content=b'{"model": "x", "messages": [', headers={
            **_headers(provider, r.token), "content-type": "application/json"})
    assert answer.status_code == 400 and shape(answer.json()) and fake.requests == []


@pytest.mark.parametrize("api", list(ERROR_SHAPES))
async def test_a_request_with_a_content_encoding_is_refused_in_the_apis_error_format(api, fake, relay):
    provider, path, shape = ERROR_SHAPES[api]
    raw = gzip.compress(json.dumps({"model": "gpt-5.5", "stream": True, "messages": []}).encode())
    async with relay(provider) as r, httpx.AsyncClient() as client:
        answer = await client.post(r.url + path, content=raw, headers={
            **_headers(provider, r.token), "content-type": "application/json", "content-encoding": "gzip"})
    assert answer.status_code == 415 and shape(answer.json()) and fake.requests == []


async def test_a_percent_encoded_key_in_the_query_must_hold_the_token(fake, relay):
    async with relay("google") as r:
        answer = await post(r, GEMINI_PATH + "&%6Bey=sk-attackers-own-key", GEMINI_BODY,
                            headers={"x-goog-api-key": r.token})
    assert answer.status_code == 401 and fake.requests == []


async def test_a_key_carrier_in_the_query_is_never_forwarded(fake, relay):
    fake.script(say("ok"))
    async with relay("google") as r:
        answer = await post(r, GEMINI_PATH + f"&api%5Fkey={r.token}", GEMINI_BODY, headers={})
    seen = fake.main_requests()[0]
    assert answer.status_code == 200 and seen.path == GEMINI_PATH and header(seen, "x-goog-api-key") == REAL_KEY


async def test_a_large_body_is_judged_off_the_event_loop(fake, relay, monkeypatch):
    from bot.relay import body_policy
    judged_on: list[str] = []
    check = body_policy.check

    def recording(*args, **kwargs):
        judged_on.append(threading.current_thread().name)
        return check(*args, **kwargs)

    monkeypatch.setattr(body_policy, "check", recording)
    fake.script(say("ok"), say("ok"))
    body = {"model": "claude-opus-4-8", "max_tokens": 10, "messages": [{"role": "user", "content": "x" * (2 << 20)}]}
    async with relay("anthropic") as r:
        await post(r, *_anthropic(FUNCTION)[1:])
        await post(r, "/v1/messages", body)
    assert judged_on[0] == threading.main_thread().name and judged_on[1] != threading.main_thread().name
