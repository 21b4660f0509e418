"""`@bot help` names every command the grammar and the command handlers know, so that a command
added to either cannot be missing from it."""
from __future__ import annotations

import re

import pytest

from bot.config import Settings
from bot.intake import grammar
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.service import commands
from bot.service.reply_texts import reply_text

SETTINGS = Settings({"BOT_HANDLE": "bot", "BOT_DEFAULT_AGENT": "codex"})
KNOWN = sorted({*grammar.CONTROL_WORDS, *commands.HANDLERS, "review", "new"})


def _help() -> str:
    spec = JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="help"))
    return reply_text(None, spec, "help", "o/r#1", SETTINGS)


@pytest.mark.parametrize("word", KNOWN)
def test_help_shows_each_command_word_after_the_mention(word):
    assert re.search(rf"`@bot (\[[a-z]+\] )?{word}\b", _help()), _help()


def test_every_word_the_grammar_answers_to_is_in_the_help_table():
    assert {usage.word for usage in grammar.USAGES} >= {*grammar.CONTROL_WORDS, *commands.HANDLERS, "review", "new"}


def test_a_control_word_of_the_help_table_is_parsed_as_that_command():
    for word in grammar.CONTROL_WORDS:
        assert grammar.parse(f"@bot {word}", "bot", ("codex",)).kind == word
