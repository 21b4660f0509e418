"""What a fire request may carry (bot/automations/fire.py): a body that is nothing or a JSON object
whose only key is `text` (a string of at most 8,000 characters), and an Idempotency-Key of 1 to 100
letters, digits and `-_.:`. Everything else is refused, whatever it is."""
from __future__ import annotations

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.automations.fire import MAX_BODY_BYTES, MAX_TEXT_CHARS, BodyTooLarge, FireInputError, read_body, read_key

KEY_CHARS = st.characters(whitelist_categories=(), whitelist_characters=(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:"))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=8)


@given(st.text(max_size=MAX_TEXT_CHARS).filter(lambda t: "\x00" not in t))
def test_a_text_within_its_bound_is_read_as_sent(text):
    assert read_body(orjson.dumps({"text": text})) == text


def test_an_empty_body_or_an_empty_object_is_no_text():
    assert read_body(b"") == read_body(b"  \n") == read_body(b"{}") == ""


@given(JSON)
def test_any_json_other_than_an_object_of_text_is_refused(value):
    body = json.dumps(value).encode()
    allowed = isinstance(value, dict) and set(value) <= {"text"} and isinstance(value.get("text", ""), str) \
        and "\x00" not in value.get("text", "")
    if allowed:
        assert read_body(body) == value.get("text", "")
    else:
        with pytest.raises(FireInputError):
            read_body(body)


@given(st.binary(max_size=200))
def test_any_bytes_are_read_or_refused_never_an_other_error(raw):
    try:
        assert isinstance(read_body(raw), str)
    except FireInputError:
        pass


def test_a_text_over_its_bound_is_refused():
    with pytest.raises(FireInputError, match="8,000 characters"):
        read_body(orjson.dumps({"text": "x" * (MAX_TEXT_CHARS + 1)}))


def test_a_body_over_its_bytes_is_refused_as_too_large():
    with pytest.raises(BodyTooLarge):
        read_body(b" " * (MAX_BODY_BYTES + 1))


@given(st.text(KEY_CHARS, min_size=1, max_size=100))
def test_a_key_of_the_allowed_characters_is_read_as_sent(key):
    assert read_key(key) == key


@given(st.text(max_size=120))
def test_any_other_key_is_refused(key):
    allowed = 0 < len(key) <= 100 and all(c.isascii() and (c.isalnum() or c in "-_.:") for c in key)
    if allowed:
        assert read_key(key) == key
    else:
        with pytest.raises(FireInputError):
            read_key(key)


def test_no_key_is_none():
    assert read_key(None) is None
