"""The relay judges each request by the grammar it accepts per API (bot/relay/grammar.py): the
fields and content parts it knows pass; a part the provider would fetch itself (an image, a document
or a file given by URL, a provider-held file id) passes only when the repository turned web access
on; an unknown field or part is dropped; each drop is recorded as a `model_policy` event. A model
that searches the web on every call is refused unless web access is on."""
from __future__ import annotations

import json

import pytest

from bot.relay import body_policy, grammar
from bot.relay.pricing import Price, PriceTable, builtin_table
from tests.fakes.provider import say
from tests.relay.conftest import post

URL = "https://attacker.example/secret-page.png"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
GEMINI_PATH = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
TEXT = {"type": "text", "text": "look at this"}


def _anthropic(part: dict, model: str = "claude-opus-4-8") -> tuple[str, str, dict]:
    return "anthropic", "/v1/messages", {"model": model, "max_tokens": 100,
                                         "messages": [{"role": "user", "content": [TEXT, part]}]}


def _anthropic_tool_result(part: dict) -> tuple[str, str, dict]:
    return "anthropic", "/v1/messages", {"model": "claude-opus-4-8", "max_tokens": 100, "messages": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [part]}]}]}


def _chat(part: dict, model: str = "gpt-5.5") -> tuple[str, str, dict]:
    return "openai", "/v1/chat/completions", {"model": model, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "look at this"}, part]}]}


def _responses(part: dict, model: str = "gpt-5.5") -> tuple[str, str, dict]:
    return "openai", "/v1/responses", {"model": model, "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "look"}, part]}]}


def _responses_tool_output(part: dict) -> tuple[str, str, dict]:
    return "openai", "/v1/responses", {"model": "gpt-5.5", "input": [
        {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [part]}]}


def _gemini(part: dict) -> tuple[str, str, dict]:
    return "google", GEMINI_PATH, {"contents": [{"role": "user", "parts": [{"text": "look"}, part]}]}


URL_PARTS = {
    "anthropic image url": _anthropic({"type": "image", "source": {"type": "url", "url": URL}}),
    "anthropic document url": _anthropic({"type": "document", "source": {"type": "url", "url": URL}}),
    "anthropic image url in a tool result": _anthropic_tool_result(
        {"type": "image", "source": {"type": "url", "url": URL}}),
    "chat image_url": _chat({"type": "image_url", "image_url": {"url": URL}}),
    "chat file_data given by url": _chat({"type": "file", "file": {"filename": "a.pdf", "file_data": URL}}),
    "responses input_image": _responses({"type": "input_image", "image_url": URL}),
    "responses input_file": _responses({"type": "input_file", "file_url": URL}),
    "responses input_image in a tool output": _responses_tool_output({"type": "input_image", "image_url": URL}),
    "responses input_image in instructions": ("openai", "/v1/responses", {"model": "gpt-5.5", "input": "hi",
        "instructions": [{"role": "developer", "content": [{"type": "input_image", "image_url": URL}]}]}),
    "gemini fileData": _gemini({"fileData": {"mimeType": "image/png", "fileUri": URL}}),
    "gemini file_data": _gemini({"file_data": {"mime_type": "image/png", "file_uri": URL}}),
}
DATA_PARTS = {
    "anthropic base64 image": _anthropic({"type": "image", "source": {
        "type": "base64", "media_type": "image/png", "data": PNG}}),
    "chat data: image_url": _chat({"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}),
    "responses data: input_image": _responses({"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}),
    "gemini inlineData": _gemini({"inlineData": {"mimeType": "image/png", "data": PNG}}),
}
UNKNOWN_PARTS = {
    "anthropic": _anthropic({"type": "video", "source": {"type": "url", "url": URL}}),
    "chat": _chat({"type": "video_url", "video_url": {"url": URL}}),
    "responses": _responses({"type": "input_video", "video_url": URL}),
    "gemini": _gemini({"videoData": {"uri": URL}}),
}
UNKNOWN_FIELDS = {
    "anthropic": _anthropic(TEXT),
    "chat": _chat({"type": "text", "text": "plain"}),
    "responses": _responses({"type": "input_text", "text": "plain"}),
    "gemini": _gemini({"text": "plain"}),
}
SEARCH_MODELS = {
    "chat gpt-4o-search-preview": _chat({"type": "text", "text": "x"}, model="gpt-4o-search-preview"),
    "chat gpt-5-search-api": _chat({"type": "text", "text": "x"}, model="gpt-5-search-api"),
    "responses o3-deep-research": _responses({"type": "input_text", "text": "x"}, model="o3-deep-research"),
    "chat perplexity sonar": _chat({"type": "text", "text": "x"}, model="perplexity/sonar-pro"),
    "chat sonar": _chat({"type": "text", "text": "x"}, model="sonar-reasoning-pro"),
    "chat groq compound": _chat({"type": "text", "text": "x"}, model="groq/compound"),
}


def _priced(model: str) -> PriceTable:
    """The built-in prices and `model`'s, as an operator who chose it would have them."""
    table = builtin_table()
    return PriceTable({**table.models, model: Price(input=1.0, output=1.0)}, table.aliases, table.version)


def _headers(provider: str, token: str) -> dict:
    return {"anthropic": {"x-api-key": token}, "openai": {"authorization": f"Bearer {token}"},
            "google": {"x-goog-api-key": token}}[provider]


def _policy_events(recorder, run_id) -> list[tuple[str, str]]:
    return [(e["outcome"], e["raw"]) for e in recorder.events(run_id) if e["kind"] == "model_policy"]


async def _sent(relay, provider: str, path: str, body: dict):
    async with relay as r:
        return await post(r, path, body, headers=_headers(provider, r.token))


@pytest.mark.parametrize("kind", list(URL_PARTS))
async def test_a_part_given_by_url_never_reaches_the_provider_without_web_access(kind, fake, relay):
    provider, path, body = URL_PARTS[kind]
    fake.script(say("answered without it"))
    answer = await _sent(relay(provider), provider, path, body)
    [seen] = fake.main_requests()
    assert answer.status_code == 200 and "attacker.example" not in json.dumps(seen.body)


@pytest.mark.parametrize("kind", list(URL_PARTS))
async def test_a_part_given_by_url_is_recorded_when_dropped(kind, fake, relay, recorder, run_id):
    provider, path, body = URL_PARTS[kind]
    fake.script(say("ok"))
    await _sent(relay(provider), provider, path, body)
    [(outcome, what)] = _policy_events(recorder, run_id)
    assert outcome == "dropped" and URL in what


@pytest.mark.parametrize("kind", list(URL_PARTS))
async def test_a_part_given_by_url_passes_with_web_access_and_is_recorded(kind, fake, relay, recorder, run_id):
    provider, path, body = URL_PARTS[kind]
    fake.script(say("fetched"))
    await _sent(relay(provider, web_access=True), provider, path, body)
    [seen] = fake.main_requests()
    assert seen.body == body and [o for o, _ in _policy_events(recorder, run_id)] == ["allowed"]


@pytest.mark.parametrize("kind", list(DATA_PARTS))
async def test_a_part_carrying_its_data_reaches_the_provider_unchanged(kind, fake, relay, recorder, run_id):
    provider, path, body = DATA_PARTS[kind]
    fake.script(say("seen"))
    await _sent(relay(provider), provider, path, body)
    assert fake.main_requests()[0].body == body and _policy_events(recorder, run_id) == []


async def test_the_model_is_told_what_was_removed_in_the_parts_place(fake, relay):
    provider, path, body = URL_PARTS["anthropic image url"]
    fake.script(say("ok"))
    await _sent(relay(provider), provider, path, body)
    [_, stand_in] = fake.main_requests()[0].body["messages"][0]["content"]
    assert stand_in["type"] == "text" and "web access is off" in stand_in["text"]


@pytest.mark.parametrize("api", list(UNKNOWN_PARTS))
async def test_an_unknown_part_is_dropped_and_recorded(api, fake, relay, recorder, run_id):
    provider, path, body = UNKNOWN_PARTS[api]
    fake.script(say("ok"))
    await _sent(relay(provider, web_access=True), provider, path, body)
    assert "attacker.example" not in json.dumps(fake.main_requests()[0].body)
    assert [o for o, _ in _policy_events(recorder, run_id)] == ["dropped"]


@pytest.mark.parametrize("api", list(UNKNOWN_FIELDS))
async def test_an_unknown_top_level_field_is_dropped_and_recorded(api, fake, relay, recorder, run_id):
    provider, path, body = UNKNOWN_FIELDS[api]
    fake.script(say("ok"))
    await _sent(relay(provider, web_access=True), provider, path, {**body, "fetch_this": URL})
    assert fake.main_requests()[0].body == body
    assert _policy_events(recorder, run_id) == [("dropped", "unknown field `fetch_this`")]


@pytest.mark.parametrize("kind", list(SEARCH_MODELS))
async def test_a_model_that_searches_on_every_call_is_refused_without_web_access(kind, fake, relay, recorder,
                                                                                 run_id):
    provider, path, body = SEARCH_MODELS[kind]
    answer = await _sent(relay(provider, prices=_priced(body["model"])), provider, path, body)
    assert answer.status_code == 400 and "web access" in answer.json()["error"]["message"]
    assert fake.requests == [] and [o for o, _ in _policy_events(recorder, run_id)] == ["refused"]


@pytest.mark.parametrize("kind", list(SEARCH_MODELS))
async def test_a_model_that_searches_on_every_call_passes_with_web_access(kind, fake, relay):
    provider, path, body = SEARCH_MODELS[kind]
    fake.script(say("searched"))
    answer = await _sent(relay(provider, web_access=True, prices=_priced(body["model"])), provider, path, body)
    assert answer.status_code == 200 and fake.main_requests()[0].body["model"] == body["model"]


RESPONSES_FUNCTION = {"type": "function", "name": "read_file", "parameters": {"type": "object"}}
HIDDEN_TOOLS = {
    "an unknown tool type": lambda tool: {"tools": [RESPONSES_FUNCTION, tool]},
    "a namespace": lambda tool: {"tools": [{"type": "namespace", "name": "ns", "tools": [RESPONSES_FUNCTION, tool]}]},
    "a tool search output": lambda tool: {"tools": [RESPONSES_FUNCTION], "input": [
        {"type": "tool_search_call", "call_id": "s1", "execution": "client", "arguments": {"query": "web"}},
        {"type": "tool_search_output", "call_id": "s1", "execution": "client", "status": "completed",
         "tools": [RESPONSES_FUNCTION, tool]}]},
}


@pytest.mark.parametrize("where", list(HIDDEN_TOOLS))
async def test_a_responses_tool_the_provider_would_run_is_dropped_wherever_it_is_declared(where, fake, relay):
    body = {"model": "gpt-5.5", "input": [{"type": "message", "role": "user", "content": "hi"}],
            **HIDDEN_TOOLS[where]({"type": "web_fetch_preview", "url": URL})}
    fake.script(say("ok"))
    await _sent(relay("openai"), "openai", "/v1/responses", body)
    assert "attacker.example" not in json.dumps(fake.main_requests()[0].body)


def _nested_gemini(levels: int) -> bytes:
    """Function responses holding parts, `levels` deep (written out: json.dumps would recurse)."""
    opening = '{"functionResponse": {"name": "f", "response": {}, "parts": [' * levels
    return (f'{{"contents": [{{"role": "user", "parts": [{opening}{{"text": "bottom"}}'
            + "]}}" * levels + "]}]}").encode()


def test_parts_nested_past_the_bound_are_dropped_and_recorded_without_exhausting_the_stack():
    checked = body_policy.check("gemini", _nested_gemini(330), [], web_access=False,
                                model="gemini-2.5-flash")
    assert "bottom" not in checked.body.decode()
    assert checked.dropped == [f"generateContent parts nested over {grammar.MAX_DEPTH} deep"]


def test_no_model_of_the_built_in_price_table_is_taken_for_one_that_searches():
    assert [model for model in builtin_table().models if grammar.searches_every_call(model)] == []
