"""The usage the relay asked for on a chat stream is removed however the stream is cut into pieces."""
from __future__ import annotations

import itertools

import pytest

from bot.relay.reply_filter import UsageChunkFilter
from tests.fakes import provider as fake_provider
from tests.fakes.provider import FakeUsage, say

TURN = say("usage: null and \"usage\":{} quoted in the text\n", pieces=3)


@pytest.fixture
def stream(monkeypatch):
    """stream(include_usage) -> the fake's chat stream of TURN, with the same reply id each time."""
    def render(include_usage: bool) -> bytes:
        monkeypatch.setattr(fake_provider, "_ids", itertools.count(1))
        return fake_provider._chat(TURN, "gpt-5.5", True, FakeUsage(), include_usage)[1]
    return render


def _filtered(pieces: list[bytes]) -> bytes:
    usage = UsageChunkFilter()
    return b"".join(usage.feed(piece) for piece in pieces) + usage.close()


def test_the_usage_asked_for_is_removed_from_a_stream_fed_whole(stream):
    assert _filtered([stream(True)]) == stream(False)


def test_the_usage_asked_for_is_removed_from_a_stream_fed_byte_by_byte(stream):
    asked = stream(True)
    assert _filtered([asked[i:i + 1] for i in range(len(asked))]) == stream(False)


def test_a_crlf_stream_loses_only_the_usage(stream):
    asked, plain = stream(True).replace(b"\n", b"\r\n"), stream(False).replace(b"\n", b"\r\n")
    assert _filtered([asked[i:i + 7] for i in range(0, len(asked), 7)]) == plain
