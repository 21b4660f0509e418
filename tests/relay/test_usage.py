"""Tokens are read from each API's own usage fields, streamed and not, as the bytes pass."""
from __future__ import annotations

import dataclasses
import json

import pytest

from bot.relay.usage import CallUsage, UsageTap, from_reply
from tests.fakes.provider import FakeUsage, say
from tests.relay.conftest import model_calls, post

KNOWN = FakeUsage(input=1200, output=340, cached=300, reasoning=40)
# what each API reports of KNOWN, normalised (Anthropic has no separate reasoning count, but cache writes)
EXPECTED = CallUsage(input_tokens=1200, output_tokens=340, cached_tokens=300, reasoning_tokens=40)
ANTHROPIC_KNOWN = FakeUsage(input=1200, output=340, cached=300, cache_write=50)
ANTHROPIC_EXPECTED = CallUsage(input_tokens=1200, output_tokens=340, cached_tokens=300, cache_write_tokens=50)

CASES = {
    "anthropic streamed": ("anthropic", "/v1/messages?beta=true",
                           {"model": "claude-opus-4-8", "stream": True, "messages": []}),
    "anthropic json": ("anthropic", "/v1/messages", {"model": "claude-opus-4-8", "messages": []}),
    "responses streamed": ("openai", "/v1/responses", {"model": "gpt-5.5", "stream": True, "input": []}),
    "chat streamed": ("openai", "/v1/chat/completions",
                      {"model": "gpt-5.5", "stream": True, "stream_options": {"include_usage": True},
                       "messages": [{"role": "user", "content": "hi"}]}),
    "chat json": ("openai", "/v1/chat/completions", {"model": "gpt-5.5", "messages": [{"role": "user", "content": "hi"}]}),
    "gemini streamed": ("google", "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
                        {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
    "gemini json": ("google", "/v1beta/models/gemini-2.5-flash:generateContent",
                    {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}),
}


def _headers(provider: str, token: str) -> dict:
    return {"anthropic": {"x-api-key": token}, "openai": {"authorization": f"Bearer {token}"},
            "google": {"x-goog-api-key": token}}[provider]


@pytest.mark.parametrize("case", list(CASES))
async def test_known_usage_is_counted_from_each_api(case, fake, relay):
    provider, path, body = CASES[case]
    anthropic = provider == "anthropic"
    fake.script(say("a long answer " * 50, usage=ANTHROPIC_KNOWN if anthropic else KNOWN, pieces=20))
    async with relay(provider) as r:
        answer = await post(r, path, body, headers=_headers(provider, r.token))
    assert answer.status_code == 200
    assert r.calls[-1].usage == (ANTHROPIC_EXPECTED if anthropic else EXPECTED)


async def test_a_chat_stream_without_include_usage_is_asked_for_it_and_counted(fake, relay):
    """A client leaving out stream_options.include_usage would otherwise spend uncounted tokens."""
    fake.script(say("ok", usage=KNOWN))
    async with relay("openai") as r:
        await post(r, "/v1/chat/completions", {"model": "gpt-5.5", "stream": True, "messages": []},
                   headers=_headers("openai", r.token))
    assert fake.main_requests()[0].body["stream_options"] == {"include_usage": True}
    assert r.calls[-1].usage == EXPECTED


async def test_the_call_is_recorded_as_enforced_with_model_status_timings_tokens_and_cost(fake, relay, recorder, run_id):
    fake.script(say("ok", usage=ANTHROPIC_KNOWN))
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", {"model": "claude-opus-4-8", "stream": True, "messages": []})
    [call] = model_calls(recorder, run_id)
    detail = call["detail"]
    assert (call["tier"], call["tool"], call["outcome"]) == ("enforced", "anthropic/anthropic", "ok")
    assert (detail["model"], detail["status"], detail["tokens"]) == ("claude-opus-4-8", 200, ANTHROPIC_EXPECTED.as_dict())
    assert detail["latency_ms"] > 0 and detail["ttfb_ms"] > 0
    assert detail["cost_usd"] == pytest.approx((1200 * 5 + 340 * 25 + 300 * 0.5 + 50 * 6.25) / 1e6)


def _sse(*events: tuple[str | None, dict]) -> bytes:
    return b"".join((f"event: {name}\n" if name else "").encode() + b"data: " + json.dumps(data).encode() + b"\n\n"
                    for name, data in events)


ANTHROPIC_STREAM = _sse(
    ("message_start", {"type": "message_start", "message": {"model": "claude-opus-4-8", "usage": {
        "input_tokens": 7, "cache_read_input_tokens": 3, "output_tokens": 1}}}),
    ("content_block_delta", {"type": "content_block_delta", "delta": {
        "type": "text_delta", "text": 'quoting "message_delta" and "usage":{"output_tokens": 999}'}}),
    ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 42}}))


def test_usage_split_across_every_byte_boundary_is_read_the_same():
    tap = UsageTap("anthropic", "text/event-stream")
    for byte in ANTHROPIC_STREAM:
        tap.feed(bytes([byte]))
    assert tap.result() == (CallUsage(input_tokens=7, output_tokens=42, cached_tokens=3), "claude-opus-4-8")


def test_answer_text_naming_the_usage_events_does_not_count():
    tap = UsageTap("anthropic", "text/event-stream")
    tap.feed(ANTHROPIC_STREAM)
    assert tap.result()[0].output_tokens == 42


def test_crlf_separated_events_are_read():
    tap = UsageTap("anthropic", "text/event-stream")
    tap.feed(ANTHROPIC_STREAM.replace(b"\n", b"\r\n"))
    assert tap.result()[0] == CallUsage(input_tokens=7, output_tokens=42, cached_tokens=3)


def test_chat_chunks_with_null_usage_are_not_taken_for_the_usage_chunk():
    tap = UsageTap("chat", "text/event-stream")
    tap.feed(_sse((None, {"model": "m", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
                  (None, {"model": "m", "choices": [{"delta": {"content": "x"}}], "usage": None})) + b"data: [DONE]\n\n")
    assert tap.result() == (CallUsage(input_tokens=9, output_tokens=4), "m")


def test_a_non_streamed_responses_reply_is_read():
    body = {"model": "gpt-5.5", "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60},
                                          "output_tokens": 30, "output_tokens_details": {"reasoning_tokens": 10}}}
    assert from_reply("responses", body) == (CallUsage(input_tokens=40, cached_tokens=60, output_tokens=30,
                                                       reasoning_tokens=10), "gpt-5.5")


def test_a_reply_without_usage_reads_as_none():
    tap = UsageTap("responses", "text/event-stream")
    tap.feed(_sse(("response.created", {"type": "response.created", "response": {}})))
    assert tap.result() == (None, None)


def test_crlf_events_split_across_every_byte_boundary_are_read():
    """The CRLF searches run only on bytes holding a carriage return: a CR left in the tail still counts."""
    tap = UsageTap("anthropic", "text/event-stream")
    for byte in ANTHROPIC_STREAM.replace(b"\n", b"\r\n"):
        tap.feed(bytes([byte]))
    assert tap.result() == (CallUsage(input_tokens=7, output_tokens=42, cached_tokens=3), "claude-opus-4-8")


def test_a_calls_usage_as_recorded_holds_every_field_of_its_counts():
    usage = CallUsage(*range(1, 1 + len(dataclasses.fields(CallUsage))))
    assert usage.as_dict() == dataclasses.asdict(usage)
