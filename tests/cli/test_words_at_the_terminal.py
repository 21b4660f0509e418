"""The words a person at the terminal reads: a rejected key in `bot run` says what they set, and
a key-shape refusal says what the expected key looks like, not what the pasted value is."""
from __future__ import annotations

import pytest

from bot.credentials.resolve import kinds_for
from bot.credentials.shapes import ShapeMismatch, check_shape
from tests.fakes.provider import fail


@pytest.mark.e2e
def test_a_rejected_key_in_bot_run_says_to_set_a_working_one_in_your_environment(bot):
    bot.provider.script(fail(401, "Incorrect API key provided"))
    done = bot.run("hello")
    assert done.returncode == 1
    assert "set a working OPENAI_API_KEY in your environment and run `bot run` again" in done.stdout
    assert "the operator must replace" not in done.stdout


def refusal(agent: str, value: str) -> str:
    kind = next(kind for kind in kinds_for(agent) if kind.name == f"{agent}:api_key")
    with pytest.raises(ShapeMismatch) as refused:
        check_shape(kind, value)
    return str(refused.value)


def test_a_gemini_key_of_the_wrong_shape_says_how_a_gemini_key_starts():
    assert refusal("gemini", "not-a-key-at-all") == (
        "This is not a Gemini API key: a Gemini API key starts with AIza and is 39 characters long.")


def test_an_anthropic_key_of_the_wrong_shape_says_how_an_anthropic_key_starts():
    assert refusal("claude", "hello") == (
        "This is not an Anthropic API key: an Anthropic API key starts with sk-ant-api03-.")
