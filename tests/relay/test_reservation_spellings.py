"""A call's hold is read from every spelling its API accepts: the output limit and the number of
answers, in camel or snake case (Gemini's JSON takes both), as a number or a numeric string."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.relay.reservation import DEFAULT_MAX_OUTPUT, LIMIT, Unreadable, ceiling

# per API: where the output limit and the answer count may be written (the container key, or None
# for the top level) -- what the property below generates from
OUTPUT_SPELLINGS = {"anthropic": [(None, "max_tokens")],
                    "chat": [(None, "max_completion_tokens"), (None, "max_tokens"), (None, "max_output_tokens")],
                    "responses": [(None, "max_output_tokens"), (None, "max_completion_tokens"), (None, "max_tokens")],
                    "gemini": [(c, f) for c in ("generationConfig", "generation_config")
                               for f in ("maxOutputTokens", "max_output_tokens")]}
ANSWER_SPELLINGS = {"anthropic": [], "responses": [], "chat": [(None, "n")],
                    "gemini": [(c, f) for c in ("generationConfig", "generation_config")
                               for f in ("candidateCount", "candidate_count")]}


def _body(request: dict) -> bytes:
    return json.dumps(request).encode()


def test_geminis_snake_case_candidate_count_is_held_in_full():
    request = {"contents": [], "generation_config": {"max_output_tokens": 100, "candidate_count": 4}}
    assert ceiling("gemini", _body(request)).output_tokens == 400


def test_geminis_camel_case_config_with_a_snake_case_count_is_held_in_full():
    request = {"contents": [], "generationConfig": {"maxOutputTokens": 100, "candidate_count": 4}}
    assert ceiling("gemini", _body(request)).output_tokens == 400


def test_a_count_written_as_a_numeric_string_is_read():
    request = {"contents": [], "generationConfig": {"maxOutputTokens": "100", "candidateCount": "8"}}
    assert ceiling("gemini", _body(request)).output_tokens == 800


def test_a_chat_call_naming_two_output_limits_is_held_at_the_larger():
    request = {"model": "gpt-5.5", "max_tokens": 9000, "max_completion_tokens": 10, "messages": []}
    assert ceiling("chat", _body(request)).output_tokens == 9000


def test_a_request_naming_no_limit_is_held_at_the_declared_default():
    assert ceiling("responses", _body({"model": "gpt-5.5", "input": "hi"})).output_tokens == DEFAULT_MAX_OUTPUT


def test_every_byte_of_the_body_is_held_as_an_input_token():
    body = _body({"model": "gpt-5.5", "input": "hi" * 100})
    assert ceiling("responses", body).input_tokens == len(body)


def test_an_unmetered_call_holds_nothing():
    assert ceiling("anthropic", _body({"model": "claude-opus-4-8", "max_tokens": 5}), metered=False).total_tokens == 0


@pytest.mark.parametrize("value", [True, "many", [4], {"n": 4}, "nan", "inf"])
def test_a_count_the_relay_cannot_read_is_refused(value):
    with pytest.raises(Unreadable, match="candidate_count"):
        ceiling("gemini", _body({"contents": [], "generation_config": {"candidate_count": value}}))


def test_an_absurd_limit_is_held_at_the_relays_bound_not_past_what_a_price_can_hold():
    usage = ceiling("chat", _body({"model": "gpt-5.5", "max_tokens": "1e308", "n": 10**40, "messages": []}))
    assert usage.output_tokens == LIMIT * LIMIT and math.isfinite(usage.output_tokens * 30.0)


# ---------------------------------------------------------------- the property

_VALUES = st.one_of(st.integers(-5, 200_000), st.integers(1, 64).map(str), st.integers(1, 64).map(float),
                    st.none())


def _readable(value: object) -> int | None:
    """The generator's own reading of what it wrote: a positive whole number, else nothing."""
    if value is None:
        return None
    number = float(value)
    return int(number) if number >= 1 else None


@st.composite
def _requests(draw, api: str) -> tuple[dict, int, int]:
    """A request of `api` with some spellings of its limit and count, other fields, and what it asks for."""
    request: dict = {"model": draw(st.sampled_from(["m", "gpt-5.5", "claude-opus-4-8"])),
                     "other": draw(st.dictionaries(st.text(max_size=8), st.integers(), max_size=3))}
    limits, counts = [], []
    for spellings, found in ((OUTPUT_SPELLINGS[api], limits), (ANSWER_SPELLINGS[api], counts)):
        for container, name in draw(st.lists(st.sampled_from(spellings), unique=True)) if spellings else []:
            value = draw(_VALUES)
            holder = request.setdefault(container, {}) if container else request
            holder[name] = value
            if (read := _readable(value)) is not None:
                found.append(read)
    return request, max(limits, default=DEFAULT_MAX_OUTPUT), max(counts, default=1)


@pytest.mark.parametrize("api", sorted(OUTPUT_SPELLINGS))
def test_every_request_is_held_at_the_most_any_spelling_allows(api):
    @settings(max_examples=200, deadline=None)
    @given(_requests(api))
    def check(generated):
        request, limit, answers = generated
        body = _body(request)
        held = ceiling(api, body)
        assert held.output_tokens == min(limit, LIMIT) * min(answers, LIMIT)
        assert held.input_tokens == len(body)

    check()
