"""The usage tap finds the usage with a byte search and parses only the events that can carry it.
Whatever the size of the pieces it is fed (a byte, a network read of 64 or 256 KiB, the whole
stream), it agrees with a decoder that parses every event, on each stream here: Claude Code's
stream as the CLI recorded it (tests/fixtures/relay/claude-code-stream.sse, from its
--include-partial-messages transcript), and each API's stream as the fake provider renders it,
with answer text that names the usage events."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.relay import usage
from bot.relay.usage import UsageTap, from_reply
from bot.relay.wire_apis.anthropic import usage as anthropic_usage
from tests.fakes.provider import FakeUsage, _render, say

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "relay" / "claude-code-stream.sse"
DECOY = 'quoting "message_delta", "usage":{"output_tokens": 999}, response.completed and usageMetadata. '
USAGE = FakeUsage(input=1200, output=340, cached=800, cache_write=64, reasoning=20, long_cache_write=16)
STREAMS = {  # name -> (api, path, request body)
    "anthropic": ("anthropic", "/v1/messages", {"model": "claude-opus-4-8", "stream": True}),
    "responses": ("responses", "/v1/responses", {"model": "gpt-6.2-sol", "stream": True}),
    "chat": ("chat", "/v1/chat/completions",
             {"model": "gpt-6.2-sol", "stream": True, "stream_options": {"include_usage": True}}),
    "gemini": ("gemini", "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse", {}),
}
PIECES = (1, 7, 1000, 64 << 10, 256 << 10, None)  # None: the whole stream at once


def _rendered(name: str, deltas: int) -> tuple[str, bytes]:
    api, path, body = STREAMS[name]
    content_type, stream = _render(api, path, body, say(DECOY * deltas, pieces=deltas), USAGE)
    assert content_type == "text/event-stream"
    return api, stream


def _every_event(stream: bytes) -> list[dict]:
    """Every SSE event's data, each one parsed."""
    events = []
    for block in stream.replace(b"\r\n", b"\n").split(b"\n\n"):
        data = b"\n".join(line[5:].lstrip(b" ") for line in block.split(b"\n") if line.startswith(b"data:"))
        if data and data != b"[DONE]":
            events.append(json.loads(data))
    return events


def _decoded(api: str, stream: bytes) -> tuple:
    """The usage and model read by parsing every event: the last event of each kind that carries it."""
    events = _every_event(stream)
    if api == "anthropic":
        start = [e for e in events if e.get("type") == "message_start"][-1]["message"]
        usage = dict(start["usage"])
        for delta in (e for e in events if e.get("type") == "message_delta"):
            usage.update({k: v for k, v in delta.get("usage", {}).items() if v is not None})
        return anthropic_usage(usage), start.get("model")
    if api == "responses":
        final = [e for e in events if e.get("type") in ("response.completed", "response.incomplete", "response.failed")]
        return from_reply(api, final[-1]["response"])
    key = "usage" if api == "chat" else "usageMetadata"
    return from_reply(api, [e for e in events if isinstance(e.get(key), dict)][-1])


def _tapped(api: str, stream: bytes, piece: int | None) -> tuple:
    tap = UsageTap(api, "text/event-stream")
    size = piece or len(stream)
    for at in range(0, len(stream), size):
        tap.feed(stream[at:at + size])
    return tap.result()


@pytest.mark.parametrize("piece", PIECES)
def test_the_tap_agrees_with_a_full_decoder_on_claude_codes_recorded_stream(piece):
    stream = RECORDED.read_bytes()
    assert _tapped("anthropic", stream, piece) == _decoded("anthropic", stream)


@pytest.mark.parametrize("piece", PIECES)
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_the_tap_agrees_with_a_full_decoder_on_each_apis_stream(name, piece):
    api, stream = _rendered(name, deltas=40)
    found = _tapped(api, stream, piece)
    assert found == _decoded(api, stream) and found[0] is not None and found[0].output_tokens == 340


@pytest.mark.parametrize("piece", (64 << 10, 256 << 10))
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_the_tap_agrees_with_a_full_decoder_on_a_4k_delta_stream_in_network_reads(name, piece):
    api, stream = _rendered(name, deltas=4000)
    assert _tapped(api, stream, piece) == _decoded(api, stream)


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_the_same_stream_with_crlf_line_ends_is_read_the_same(name):
    api, stream = _rendered(name, deltas=40)
    assert _tapped(api, stream.replace(b"\n", b"\r\n"), 1000) == _decoded(api, stream)


@pytest.mark.parametrize("behind", (1, 700, 64 << 10))
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_a_stream_longer_than_the_tap_holds_is_read_as_it_passes_and_agrees(name, behind, monkeypatch):
    monkeypatch.setattr(usage, "BEHIND", behind)
    api, stream = _rendered(name, deltas=4000)
    assert _tapped(api, stream, 1000) == _decoded(api, stream)


@pytest.mark.parametrize("piece", (1, 2, 7, 1000))
@pytest.mark.parametrize("name", sorted(STREAMS))
def test_pieces_read_where_they_lie_agree_even_when_a_blank_line_is_split_between_them(name, piece, monkeypatch):
    monkeypatch.setattr(usage, "IN_PLACE", 1)  # every piece read in place, none joined first
    api, stream = _rendered(name, deltas=40)
    assert _tapped(api, stream, piece) == _decoded(api, stream)
    assert _tapped(api, stream.replace(b"\n", b"\r\n"), piece) == _decoded(api, stream)
