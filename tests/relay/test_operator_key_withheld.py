"""What the relay passes back to the sandbox is the provider's answer, not the operator's: reply
headers are an allowlist (the operator's organisation and project ids stay out), and the operator's
key, in any form the masking layer knows, is in no byte the CLI receives: not in a header, not in an
error body that quotes the request, not in a stream, whatever its piece boundaries."""
from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.record.leaks import scan
from bot.record.recorder import Recorder
from bot.relay.reply_headers import allowed
from bot.relay.server import ModelRelay, Upstream
from tests.relay.conftest import ANTHROPIC, REAL_KEY, model_calls
from tests.relay.key_encodings import ENCODINGS

OPERATOR_HEADERS = [(b"openai-organization", b"org-operator0123456789"), (b"openai-project", b"proj_operator0123"),
                    (b"anthropic-organization-id", b"0f1e2d3c-operator-org"), (b"x-goog-user-project", b"operator-proj"),
                    (b"set-cookie", b"__cf_bm=operator; path=/"), (b"cf-ray", b"8a1b2c3d4e5f-AMS"),
                    (b"server", b"gateway/1.2"), (b"x-envoy-upstream-service-time", b"12")]
ALLOWED_HEADERS = [(b"request-id", b"req_011"), (b"retry-after", b"3"), (b"anthropic-ratelimit-tokens-remaining", b"9"),
                   (b"x-ratelimit-remaining-requests", b"99"), (b"x-codex-primary-used-percent", b"12.5")]
MESSAGE = json.dumps({"id": "msg_1", "type": "message", "model": "claude-opus-4-8", "content": [],
                      "usage": {"input_tokens": 3, "output_tokens": 2}}).encode()


class Scripted:
    """A provider that answers every request with the given status, headers and body pieces."""

    def __init__(self, status: int, headers: list[tuple[bytes, bytes]], pieces: list[bytes], sized: bool = True):
        self.status, self.headers, self.pieces, self.sized = status, headers, pieces, sized

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        await reader.readexactly(length)
        body = b"".join(self.pieces)
        framing = b"content-length: %d\r\n" % len(body) if self.sized else b""
        writer.write(b"HTTP/1.1 %d X\r\n%s%sconnection: close\r\n\r\n" % (
            self.status, b"".join(n + b": " + v + b"\r\n" for n, v in self.headers), framing))
        for piece in self.pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0)
        writer.close()


async def _raw_call(relay: ModelRelay, body: dict) -> bytes:
    """Everything the CLI receives for one call: status line, headers, framing and body, as bytes."""
    data = json.dumps(body).encode()
    reader, writer = await asyncio.open_connection("127.0.0.1", relay.port)
    writer.write(b"POST /v1/messages HTTP/1.1\r\nhost: relay\r\nx-api-key: %s\r\ncontent-type: application/json\r\n"
                 b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (relay.token.encode(), len(data), data))
    await writer.drain()
    received = await reader.read()
    writer.close()
    return received


async def _through_relay(make_relay, provider: Scripted, **kwargs) -> tuple[bytes, ModelRelay]:
    server = await asyncio.start_server(provider.serve, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, make_relay("anthropic", base_url=base, **kwargs) as r:
        received = await _raw_call(r, ANTHROPIC[1])
    return received, r


def _header_names(received: bytes) -> set[bytes]:
    head = received.split(b"\r\n\r\n", 1)[0]
    return {line.split(b":", 1)[0].lower() for line in head.split(b"\r\n")[1:]}


def _leaks(received: bytes) -> list:
    return scan({"as bytes": received.decode("latin-1"), "as text": received.decode("utf-8", "replace")}, [REAL_KEY])


async def test_reply_headers_naming_the_operators_organisation_and_project_never_reach_the_cli(relay):
    received, _ = await _through_relay(relay, Scripted(200, OPERATOR_HEADERS + ALLOWED_HEADERS + [
        (b"content-type", b"application/json")], [MESSAGE]))
    names = _header_names(received)
    assert not names & {name for name, _ in OPERATOR_HEADERS}
    assert {name for name, _ in ALLOWED_HEADERS} <= names and received.endswith(MESSAGE)


async def test_the_reply_headers_dropped_are_recorded_by_name(relay, recorder, run_id):
    await _through_relay(relay, Scripted(200, OPERATOR_HEADERS, [MESSAGE]))
    [call] = model_calls(recorder, run_id)
    assert {"openai-organization", "anthropic-organization-id", "set-cookie"} <= set(call["detail"]["headers_dropped"])


async def test_an_allowed_header_whose_value_carries_the_key_is_dropped(relay):
    received, r = await _through_relay(relay, Scripted(200, [(b"x-request-id", REAL_KEY.encode())], [MESSAGE]))
    assert b"x-request-id" not in _header_names(received) and _leaks(received) == []


async def test_an_error_body_quoting_the_key_is_replaced_by_the_relays_own_in_the_apis_format(relay, recorder, run_id):
    quoted = json.dumps({"error": {"type": "invalid_request_error",
                                   "message": f"bad request; headers were x-api-key: {REAL_KEY}"}}).encode()
    received, _ = await _through_relay(relay, Scripted(400, [(b"content-type", b"application/json")], [quoted]))
    body = json.loads(received.split(b"\r\n\r\n", 1)[1])
    assert received.startswith(b"HTTP/1.1 400") and body["type"] == "error"
    assert "withheld" in body["error"]["message"] and _leaks(received) == []
    assert [e["outcome"] for e in recorder.events(run_id) if e["kind"] == "model_policy"] == ["withheld"]


async def test_an_error_body_without_the_key_passes_as_the_provider_sent_it(relay):
    error = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: too big"}})
    received, _ = await _through_relay(relay, Scripted(400, [(b"content-type", b"application/json")], [error.encode()]))
    assert received.endswith(error.encode())


async def test_a_compressed_reply_the_relay_cannot_check_is_refused(relay):
    received, r = await _through_relay(relay, Scripted(200, [(b"content-encoding", b"br")], [b"\x1b\x00\x00"]))
    assert received.startswith(b"HTTP/1.1 502") and b"compressed" in received
    assert r.calls[-1].charged_max  # the provider answered 200: it may have billed the call


async def test_a_stream_carrying_the_key_across_pieces_reaches_the_cli_blanked(relay, recorder, run_id):
    event = (b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
             b'"delta":{"type":"text_delta","text":"echo: ' + REAL_KEY.encode() + b'"}}\n\n')
    at = event.index(REAL_KEY.encode()) + 9
    received, _ = await _through_relay(relay, Scripted(200, [(b"content-type", b"text/event-stream")],
                                                       [event[:at], event[at:]], sized=False))
    assert _leaks(received) == [] and b"*********" in received
    assert "withheld" in [e["outcome"] for e in recorder.events(run_id) if e["kind"] == "model_policy"]


# ---------------------------------------------------------------- the properties

_NAMES = st.one_of(st.sampled_from([n for n, _ in OPERATOR_HEADERS + ALLOWED_HEADERS]),
                   st.from_regex(rb"[a-z][a-z0-9-]{0,24}", fullmatch=True),
                   st.sampled_from([b"anthropic-ratelimit-", b"x-ratelimit-", b"openai-", b"anthropic-", b"x-codex-"])
                   .flatmap(lambda prefix: st.from_regex(rb"[a-z0-9-]{1,12}", fullmatch=True).map(lambda t: prefix + t)))
_VALUES = st.from_regex(rb"[!-~]{1,30}", fullmatch=True)


def _run(coroutine):
    return asyncio.run(coroutine)


async def _once(tmp_path, provider: Scripted) -> bytes:
    recorder = Recorder(tmp_path / "bot.db")

    def make_relay(provider_name: str, **kwargs) -> ModelRelay:
        upstream = Upstream(provider_name, REAL_KEY, base_url=kwargs.pop("base_url"))
        return ModelRelay(upstream, recorder, recorder.start_run(agent="t"), **kwargs)

    received, _ = await _through_relay(make_relay, provider)
    return received


def test_random_reply_header_sets_reach_the_cli_only_through_the_allowlist(tmp_path):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(st.tuples(_NAMES, _VALUES), max_size=12))
    def check(headers):
        headers = [(name, value) for name, value in headers if name not in (b"content-length", b"transfer-encoding",
                                                                             b"connection")]
        received = _run(_once(tmp_path, Scripted(200, headers, [MESSAGE])))
        passed = _header_names(received) - {b"content-length", b"transfer-encoding", b"connection"}
        assert all(allowed(name) for name in passed)
        assert passed == {name.lower() for name, _ in headers if allowed(name)}

    check()


def test_random_error_bodies_embedding_the_key_in_each_form_never_reach_the_cli(tmp_path):
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(sorted(ENCODINGS)), st.sampled_from([400, 404, 409, 413, 422]),
           st.text(max_size=80), st.text(max_size=80), st.booleans())
    def check(encoding, status, before, after, as_json):
        quoted = before + ENCODINGS[encoding](REAL_KEY) + after
        body = json.dumps({"error": {"message": quoted}}).encode() if as_json else quoted.encode()
        received = _run(_once(tmp_path, Scripted(status, [(b"content-type", b"application/json")], [body])))
        assert received.startswith(b"HTTP/1.1 %d" % status) and _leaks(received) == []

    check()


def test_random_streams_embedding_the_key_in_each_form_never_reach_the_cli(tmp_path):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(sorted(ENCODINGS)), st.text(max_size=60), st.lists(st.integers(1, 400), max_size=5))
    def check(encoding, text, cuts):
        delta = json.dumps({"type": "content_block_delta", "delta": {"text": text + ENCODINGS[encoding](REAL_KEY)}})
        body = b"event: content_block_delta\ndata: " + delta.encode() + b"\n\n"
        points = sorted({min(cut, len(body)) for cut in cuts})
        pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True) if b > a]
        received = _run(_once(tmp_path, Scripted(200, [(b"content-type", b"text/event-stream")], pieces, sized=False)))
        assert _leaks(received) == []

    check()
