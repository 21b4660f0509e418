"""Each credential kind checks the shape of a pasted value before it is stored."""
from __future__ import annotations

import json

import pytest

from bot.credentials import resolve as credentials
from bot.credentials.shapes import ShapeMismatch, check_shape

API_KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4 + "-AbCdEfAA"
OAUTH_TOKEN = "sk-ant-oat01-" + "Z9y8X7w6V5u4T3s2R1q0" * 4 + "-ZyXwVuAA"
OPENAI_KEY = "sk-proj-" + "abcDEF123456" * 5
GEMINI_KEY = "AIzaSy" + "B" * 33


def kind(name: str):
    return credentials.find_kind(name)


def test_api_key_under_subscription_token_names_the_right_kind():
    """An sk-ant-api03 key pasted as a Claude subscription token is refused, naming the API key kind."""
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("claude:oauth_token"), API_KEY)
    assert "Anthropic API key" in str(caught.value)
    assert API_KEY not in str(caught.value)


@pytest.mark.parametrize(("name", "value", "named"), [
    ("claude:api_key", OAUTH_TOKEN, "Claude subscription token"),
    ("claude:api_key", "hello", "sk-ant-api"),
    ("claude:api_key", OPENAI_KEY, "OpenAI API key"),
    ("codex:api_key", API_KEY, "Anthropic API key"),
    ("codex:auth_json", OPENAI_KEY, "OpenAI API key"),
], ids=["subscription-token-under-api-key", "hello-under-anthropic-key", "openai-key-under-anthropic-key",
        "anthropic-key-under-openai-key", "bare-key-under-codex-auth-json"])
def test_a_refusal_names_what_the_value_looks_like(name, value, named):
    """A value pasted under the wrong kind is refused, naming the kind it looks like (or, for
    something like no key at all, the shape the kind expects)."""
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind(name), value)
    assert named in str(caught.value)


def test_gemini_key_has_its_length():
    with pytest.raises(ShapeMismatch):
        check_shape(kind("gemini:api_key"), GEMINI_KEY[:-3])


@pytest.mark.parametrize("name,value", [
    ("claude:oauth_token", OAUTH_TOKEN), ("claude:api_key", API_KEY), ("codex:api_key", OPENAI_KEY),
    ("opencode:anthropic_api_key", API_KEY), ("opencode:openai_api_key", OPENAI_KEY),
    ("gemini:api_key", GEMINI_KEY),
    ("codex:auth_json", json.dumps({"auth_mode": "chatgpt", "tokens": {"access_token": "x"}})),
    ("opencode:auth_json", json.dumps({"anthropic": {"type": "api", "key": API_KEY}})),
])
def test_well_shaped_values_pass(name, value):
    check_shape(kind(name), value)


def test_codex_auth_json_needs_tokens_or_a_key():
    with pytest.raises(ShapeMismatch):
        check_shape(kind("codex:auth_json"), json.dumps({"hello": 1}))
