"""An operator gateway (BOT_<AGENT>_BASE_URL) is reached by the relay with the agent's key as its
credential: without one, the "no credentials" answer says which variable to set, and that a gateway
that asks for no key takes any placeholder."""
from __future__ import annotations

from bot.config import Settings
from bot.credentials.resolve import auth_required_message


def test_without_a_key_the_answer_names_the_gateway_and_the_placeholder():
    said = auth_required_message(Settings({"BOT_CODEX_BASE_URL": "https://llm.internal/v1"}), "codex")
    assert "`OPENAI_API_KEY`" in said and "BOT_CODEX_BASE_URL" in said and "placeholder" in said


def test_without_a_gateway_the_answer_says_nothing_of_one():
    said = auth_required_message(Settings({}), "codex")
    assert "BASE_URL" not in said and "placeholder" not in said
