"""The keys a CLI puts in a request's query string (bot/relay/server.py `_query_keys`): a query none of
whose names can be a key carrier skips the parse, and reads exactly as the parse reads it."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.relay import apis
from bot.relay.server import _query_keys


def _parsed(query: bytes) -> tuple[list[str], bytes]:
    """The parse every query went through before the shortcut."""
    if not query:
        return [], query
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    keys = [value for name, value in pairs if name.strip().lower() in apis.QUERY_KEY_CARRIERS]
    if not keys:
        return [], query
    return keys, urlencode([(n, v) for n, v in pairs if n.strip().lower() not in apis.QUERY_KEY_CARRIERS]).encode()


_NAMES = sorted(apis.QUERY_KEY_CARRIERS) + ["beta", "alt", "KEY", " Token ", "x-API-Key", "k%65y", "%4beY", "ke+y",
                                            "monkey", "tokens", "api%5fkey", "AUTHORIZATION"]
_PART = st.one_of(st.sampled_from(_NAMES), st.text(st.characters(max_codepoint=255), max_size=8))
_PAIR = st.tuples(_PART, st.sampled_from(["=", "", "=="]), _PART).map("".join)


@settings(max_examples=500, deadline=None)
@given(pairs=st.lists(_PAIR, max_size=5), separator=st.sampled_from(["&", ";", "&&"]))
def test_a_query_reads_as_the_parse_reads_it(pairs, separator):
    query = separator.join(pairs).encode("latin-1")
    assert _query_keys(query) == _parsed(query)


def test_a_query_without_a_carrier_is_kept_byte_for_byte():
    assert _query_keys(b"beta=true&alt=sse") == ([], b"beta=true&alt=sse")


def test_a_percent_escaped_carrier_name_is_read():
    assert _query_keys(b"beta=true&%6Bey=abc") == (["abc"], b"beta=true")
