"""The reply headers' allowlist (bot/relay/reply_headers.py) looks at all the allowed values with one
gate first: a value carrying the operator's key is withheld exactly as when each value was looked at
alone (the old way, kept here as the oracle), whatever the headers."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.relay import reply_headers
from bot.relay.key_guard import KeyGuard
from bot.relay.reply_headers import NAME_CAP, Down, allowed, headers_down
from tests.relay.conftest import REAL_KEY
from tests.relay.key_encodings import ENCODINGS
from tests.relay.test_key_guard_gate import SECRETS, _near_misses

GUARDS = [KeyGuard([secret]) for secret in SECRETS]
_NAMES = [b"content-type", b"Request-Id", b"x-request-id", b"anthropic-ratelimit-tokens-remaining",
          b"x-ratelimit-limit-requests", b"retry-after", b"content-length", b"transfer-encoding", b"server",
          b"openai-organization", b"set-cookie", b"x-codex-primary-used-percent"]


def _old_headers_down(raw: list[tuple[bytes, bytes]], guard: KeyGuard, resized: bool) -> Down:
    """The allowlist as it was: the key looked for in each allowed value alone."""
    down = Down()
    chunked = resized or any(name.lower() == b"transfer-encoding" for name, _ in raw)
    for name, value in raw:
        lowered = name.lower()
        if lowered == b"content-length" and not chunked:
            down.headers.append((name, value))
            down.sized = True
        elif not allowed(name):
            if lowered not in (b"content-length", b"transfer-encoding", b"connection", b"keep-alive"):
                down.dropped.append(lowered[:NAME_CAP].decode("latin-1"))
        elif guard.carries(value):
            down.withheld.append(lowered[:NAME_CAP].decode("latin-1"))
        else:
            down.headers.append((name, value))
    down.dropped = sorted(set(down.dropped))
    return down


def _values(secret: str) -> st.SearchStrategy[bytes]:
    part = st.one_of(st.sampled_from(_near_misses(secret)), st.text(max_size=20))
    return st.lists(part, max_size=3).map(lambda parts: "".join(parts).encode("utf-8", "surrogatepass"))


@st.composite
def _case(draw: st.DrawFn) -> tuple[int, list[tuple[bytes, bytes]], bool]:
    which = draw(st.integers(0, len(SECRETS) - 1))
    headers = draw(st.lists(st.tuples(st.sampled_from(_NAMES), _values(SECRETS[which])), max_size=8))
    return which, headers, draw(st.booleans())


@settings(max_examples=400, deadline=None)
@given(case=_case())
def test_the_headers_down_are_those_of_a_look_at_each_value_alone(case):
    which, headers, resized = case
    guard = GUARDS[which]
    assert headers_down(headers, guard, resized=resized) == _old_headers_down(headers, guard, resized)


@settings(max_examples=400, deadline=None)
@given(case=_case())
def test_the_gate_opens_on_joined_values_wherever_it_opens_on_one(case):
    which, headers, _ = case
    guard = GUARDS[which]
    values = [value for _, value in headers]
    assert guard.might_carry(b"\n".join(values)) or not any(guard.might_carry(value) for value in values)


def test_a_rate_limit_header_carrying_the_key_among_others_is_withheld():
    guard = KeyGuard([REAL_KEY])
    raw = [(b"anthropic-ratelimit-requests-limit", b"50"), (b"request-id", ENCODINGS["base64"](REAL_KEY).encode()),
           (b"anthropic-ratelimit-tokens-remaining", b"1000"), (b"content-type", b"text/event-stream")]
    down = reply_headers.headers_down(raw, guard)
    assert down.withheld == ["request-id"] and [name for name, _ in down.headers] == [
        b"anthropic-ratelimit-requests-limit", b"anthropic-ratelimit-tokens-remaining", b"content-type"]
