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


def test_subscription_token_under_api_key_names_the_right_kind():
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("claude:api_key"), OAUTH_TOKEN)
    assert "Claude subscription token" in str(caught.value)


def test_hello_is_not_an_anthropic_key():
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("claude:api_key"), "hello")
    assert "sk-ant-api" in str(caught.value)


def test_openai_key_under_anthropic_names_openai():
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("claude:api_key"), OPENAI_KEY)
    assert "OpenAI API key" in str(caught.value)


def test_anthropic_key_is_not_an_openai_key():
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("codex:api_key"), API_KEY)
    assert "Anthropic API key" in str(caught.value)


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


def test_a_bare_key_as_codex_auth_json_names_the_api_key_kind():
    with pytest.raises(ShapeMismatch) as caught:
        check_shape(kind("codex:auth_json"), OPENAI_KEY)
    assert "OpenAI API key" in str(caught.value)


def test_codex_auth_json_needs_tokens_or_a_key():
    with pytest.raises(ShapeMismatch):
        check_shape(kind("codex:auth_json"), json.dumps({"hello": 1}))
