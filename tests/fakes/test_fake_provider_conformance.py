"""The fake provider answers as the real APIs do: the providers' official Python SDKs (anthropic,
openai, google-genai) call it, streamed and not, and every reply and every stream event is
validated by the SDK's own types (strict response validation where the SDK has it, and each
event re-validated from its wire form, so a missing or misnamed field fails)."""
from __future__ import annotations

from typing import get_args

import anthropic
import openai
import pytest
from anthropic.types import Message, RawMessageStreamEvent
from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import Response, ResponseStreamEvent

from tests.fakes.provider import FakeProvider, FakeUsage, call, fail, say

_RAW_EVENT = get_args(get_args(RawMessageStreamEvent)[0])
_RESPONSES_EVENT = get_args(get_args(ResponseStreamEvent)[0])
KEY = "sk-fake-conformance-0123456789"
USAGE = FakeUsage(input=7, output=5, cached=3, cache_write=2, reasoning=1)
TOOL = {"name": "write_file", "description": "write a file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        provider.usage = USAGE
        yield provider


def _anthropic(fake: FakeProvider) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=fake.url, api_key=KEY, max_retries=0, _strict_response_validation=True)


def _openai(fake: FakeProvider) -> openai.OpenAI:
    return openai.OpenAI(base_url=fake.url + "/v1", api_key=KEY, max_retries=0, _strict_response_validation=True)


def _gemini(fake: FakeProvider) -> genai.Client:
    return genai.Client(api_key=KEY, http_options=genai_types.HttpOptions(base_url=fake.url, api_version="v1beta"))


def _validated(events: list, expected: type) -> list:
    """Each event re-validated from its wire form by the class the SDK chose for it (its `type`)."""
    assert events and all(isinstance(event, expected) for event in events), [type(e) for e in events]
    return [type(event).model_validate(event.to_dict(mode="json")) for event in events]


# ---------------------------------------------------------------- Anthropic Messages

ANTHROPIC = {"model": "claude-opus-4-8", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}


def test_an_anthropic_message_is_a_valid_sdk_message(fake):
    fake.script(say("hello there"))
    message = _anthropic(fake).messages.create(**ANTHROPIC)
    Message.model_validate(message.to_dict(mode="json"))
    assert (message.content[0].type, message.stop_reason, message.usage.cache_read_input_tokens) == ("text", "end_turn", 3)


def test_an_anthropic_stream_is_valid_sdk_events_that_add_up_to_the_message(fake):
    fake.script(call("write_file", {"path": "a.txt"}))
    tools = [{"name": "write_file", "input_schema": TOOL["parameters"]}]
    with _anthropic(fake).messages.stream(**ANTHROPIC, tools=tools) as stream:
        events = list(stream)
        final = stream.get_final_message()
    kinds = [e.type for e in _validated([e for e in events if e.type in _RAW], _RAW_EVENT)]
    assert kinds[0] == "message_start" and kinds[-1] == "message_stop"
    assert (final.content[0].type, final.content[0].input, final.usage.output_tokens) == ("tool_use", {"path": "a.txt"}, 5)


_RAW = {"message_start", "message_delta", "message_stop", "content_block_start", "content_block_delta",
        "content_block_stop"}


# ---------------------------------------------------------------- OpenAI Responses

def test_a_responses_call_without_stream_gets_a_valid_response_object(fake):
    fake.script(say("hello there"))
    response = _openai(fake).responses.create(model="gpt-5.5", input=[{"role": "user", "content": "hi"}])
    Response.model_validate(response.to_dict(mode="json"))
    assert (response.output_text, response.status, response.usage.input_tokens_details.cached_tokens) == (
        "hello there", "completed", 3)


def test_a_responses_call_with_a_plain_string_input_is_answered(fake):
    response = _openai(fake).responses.create(model="gpt-5.5", input="say hi")
    assert response.output_text.endswith("last_user=say hi")


def test_a_responses_stream_is_valid_sdk_events_numbered_in_order(fake):
    fake.script(say("one two three", pieces=3))
    events = list(_openai(fake).responses.create(model="gpt-5.5", input="hi", stream=True))
    validated = _validated(events, _RESPONSES_EVENT)
    assert [e.sequence_number for e in validated] == list(range(len(validated)))
    completed = validated[-1]
    assert completed.type == "response.completed" and completed.response.output_text == "one two three"


def test_a_responses_stream_read_by_the_sdk_helper_ends_in_the_whole_response(fake):
    fake.script(call("write_file", {"path": "a.txt"}))
    with _openai(fake).responses.stream(model="gpt-5.5", input="hi", tools=[dict(TOOL, type="function")]) as stream:
        final = stream.get_final_response()
    assert (final.output[0].type, final.output[0].name, final.usage.total_tokens) == ("function_call", "write_file", 17)


# ---------------------------------------------------------------- OpenAI Chat Completions

CHAT = {"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}]}


def test_a_chat_completion_is_a_valid_sdk_completion(fake):
    fake.script(call("write_file", {"path": "a.txt"}))
    completion = _openai(fake).chat.completions.create(**CHAT, tools=[{"type": "function", "function": TOOL}])
    ChatCompletion.model_validate(completion.to_dict(mode="json"))
    assert (completion.choices[0].finish_reason, completion.choices[0].message.tool_calls[0].function.name) == (
        "tool_calls", "write_file")


def test_a_chat_stream_that_did_not_ask_for_usage_has_none(fake):
    fake.script(say("one two", pieces=2))
    chunks = _validated(list(_openai(fake).chat.completions.create(**CHAT, stream=True)), ChatCompletionChunk)
    assert all(chunk.choices and chunk.usage is None for chunk in chunks)


def test_a_chat_stream_that_asked_for_usage_ends_in_a_valid_usage_chunk(fake):
    fake.script(say("one two", pieces=2))
    stream = _openai(fake).chat.completions.create(**CHAT, stream=True, stream_options={"include_usage": True})
    chunks = _validated(list(stream), ChatCompletionChunk)
    assert (chunks[-1].choices, chunks[-1].usage.prompt_tokens) == ([], 12)
    assert "".join(c.choices[0].delta.content or "" for c in chunks[:-1]) == "one two"


# ---------------------------------------------------------------- Gemini

def test_a_gemini_answer_is_a_valid_sdk_response(fake):
    fake.script(say("hello there"))
    client = _gemini(fake)  # kept: a dropped client closes its HTTP session
    response = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    genai_types.GenerateContentResponse.model_validate(response.model_dump(exclude_none=True))
    assert (response.text, response.usage_metadata.cached_content_token_count) == ("hello there", 3)


def test_a_gemini_stream_is_valid_sdk_responses(fake):
    fake.script(say("one two three", pieces=3))
    client = _gemini(fake)
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    for chunk in chunks:
        genai_types.GenerateContentResponse.model_validate(chunk.model_dump(exclude_none=True))
    assert "".join(c.text or "" for c in chunks) == "one two three" and chunks[-1].usage_metadata.total_token_count


# ---------------------------------------------------------------- errors, in each API's own format

def test_an_anthropic_rate_limit_is_the_sdks_rate_limit_error_with_its_type():
    with FakeProvider() as fake:
        fake.script(fail(429, "slow down", retry_after="7"))
        with pytest.raises(anthropic.RateLimitError) as raised:
            _anthropic(fake).messages.create(**ANTHROPIC)
    assert (raised.value.body["error"]["type"], raised.value.response.headers["retry-after"]) == ("rate_limit_error", "7")


def test_an_openai_rate_limit_is_the_sdks_rate_limit_error_with_its_code():
    with FakeProvider() as fake:
        fake.script(fail(429, "slow down"))
        with pytest.raises(openai.RateLimitError) as raised:
            _openai(fake).responses.create(model="gpt-5.5", input="hi")
    assert (raised.value.code, raised.value.type, raised.value.param) == ("rate_limit_exceeded", "requests", None)


def test_a_gemini_rate_limit_carries_the_status_google_sends_for_it():
    with FakeProvider() as fake:
        fake.script(fail(429, "slow down"))
        client = _gemini(fake)
        with pytest.raises(genai_errors.ClientError) as raised:
            client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert (raised.value.code, raised.value.status) == (429, "RESOURCE_EXHAUSTED")
