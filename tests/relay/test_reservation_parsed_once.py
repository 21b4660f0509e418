"""The relay reads a call's hold from the body policy's own parse of the request (bot/relay/server.py
`_reserve`, `reservation.ceiling_of`) instead of parsing the body it sends a second time: the hold is
the same as the one read from those bytes."""
from __future__ import annotations

import pytest
from hypothesis import assume, given, settings

from bot.relay import body_policy, reservation
from tests.relay.test_reservation_spellings import OUTPUT_SPELLINGS, _body, _requests


def _both(api: str, request: dict) -> tuple[object, object]:
    try:
        checked = body_policy.check(api, _body(request), [], web_access=False)
    except body_policy.BodyRefused:
        assume(False)
        raise
    assert checked.request is not None
    return _read(reservation.ceiling, api, checked.body), _read(reservation.ceiling_of, api, checked.request,
                                                              len(checked.body))


def _read(reader, *args) -> object:
    try:
        return reader(*args)
    except reservation.Unreadable as unreadable:
        return str(unreadable)


@pytest.mark.parametrize("api", sorted(OUTPUT_SPELLINGS))
def test_the_hold_read_from_the_policys_parse_is_the_hold_read_from_the_bytes_sent(api):
    @settings(max_examples=150, deadline=None)
    @given(_requests(api))
    def check(generated):
        from_bytes, from_parse = _both(api, generated[0])
        assert from_parse == from_bytes

    check()


def test_a_count_the_relay_cannot_read_is_refused_from_the_parse_too():
    request = {"contents": [], "generation_config": {"candidate_count": "many"}}
    with pytest.raises(reservation.Unreadable, match="candidate_count"):
        reservation.ceiling_of("gemini", request, 10)
