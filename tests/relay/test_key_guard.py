"""The relay's guard of the operator's key in what it passes to the sandbox (bot/relay/key_guard.py):
every form the masking layer knows is found, blanked in a stream whatever the piece boundaries, and
a body without the key passes byte for byte, without being held."""
from __future__ import annotations

import base64

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.record.leaks import scan
from bot.relay.key_guard import KeyGuard
from tests.relay.conftest import REAL_KEY
from tests.relay.key_encodings import ENCODINGS

GUARD = KeyGuard([REAL_KEY])


def _event(text: str) -> bytes:
    return b'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"%s"}}\n\n' % (
        text.encode("utf-8"))


def _leaks(data: bytes) -> list:
    return scan({"latin-1": data.decode("latin-1"), "utf-8": data.decode("utf-8", "replace")}, [REAL_KEY])


def _streamed(pieces: list[bytes]) -> bytes:
    mask = GUARD.stream()
    return b"".join(mask.feed(piece) for piece in pieces) + mask.close()


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_whole_bytes_carrying_the_key_are_found(encoding):
    assert GUARD.carries(b'{"error": {"message": "bad request: ' + ENCODINGS[encoding](REAL_KEY).encode() + b'"}}')


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_a_stream_carrying_the_key_reaches_the_client_blanked_at_its_length(encoding):
    body = _event("hello ") + _event("quoted: " + ENCODINGS[encoding](REAL_KEY)) + _event(" bye")
    out = _streamed([body])
    assert len(out) == len(body) and _leaks(out) == []


def test_bytes_without_the_key_are_not_found():
    assert not GUARD.carries(_event("an ordinary answer with sk-other words, 0x1f, %20 and &amp;"))


def test_a_stream_without_the_key_passes_byte_for_byte_and_each_piece_at_once():
    mask = GUARD.stream()
    pieces = [_event(f"word {i} é \\u00e9 \\\"quoted\\\" %20 ") for i in range(50)]
    assert [mask.feed(piece) for piece in pieces] == pieces and mask.close() == b""


def test_a_key_split_between_two_pieces_is_blanked_whole():
    body = _event("the key is " + REAL_KEY + " indeed")
    at = body.index(REAL_KEY.encode()) + 14
    out = _streamed([body[:at], body[at:]])
    assert _leaks(out) == [] and len(out) == len(body)


@settings(max_examples=300, deadline=None)
@given(encoding=st.sampled_from(sorted(ENCODINGS)), before=st.text(max_size=200), after=st.text(max_size=200),
       cuts=st.lists(st.integers(0, 2000), max_size=8))
def test_the_key_in_any_form_at_any_piece_boundaries_never_passes_the_stream(encoding, before, after, cuts):
    body = _event(before) + _event(before + ENCODINGS[encoding](REAL_KEY) + after) + _event(after)
    points = sorted({min(cut, len(body)) for cut in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    out = _streamed(pieces)
    assert len(out) == len(body) and _leaks(out) == []


@settings(max_examples=200, deadline=None)
@given(texts=st.lists(st.text(max_size=120), min_size=1, max_size=10))
def test_a_stream_of_ordinary_text_passes_unchanged(texts):
    pieces = [_event(text) for text in texts]
    assert _streamed(pieces) == b"".join(pieces)


@pytest.mark.parametrize("shift", range(5))
def test_a_run_of_the_key_base32_encoded_into_a_partial_last_block_is_found_and_blanked(shift):
    """16 bytes of the key (a counted run) fill 26 base32 letters: the last block is partial, and
    the masking layer's search behind the gate decodes it to its last whole byte."""
    encoded = base64.b32encode(b"\0" * shift + REAL_KEY[4:20].encode()).decode().rstrip("=")
    assert GUARD.carries(_event("quoted: " + encoded))
    body = _event("quoted: " + encoded) + _event(" bye")
    assert encoded[-12:].encode() not in _streamed([body])
