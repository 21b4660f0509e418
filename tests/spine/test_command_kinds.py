"""The command kinds are named once (bot/intake/grammar.py) and every table keyed by them is
complete: each control word is a kind, each acting kind has its handler."""
from __future__ import annotations

import typing

from bot.intake import grammar
from bot.service import commands


def test_every_control_word_of_the_help_table_is_a_control_kind():
    assert set(grammar.CONTROL_WORDS) == set(typing.get_args(grammar.ControlKind))


def test_every_control_kind_is_a_command_kind():
    assert set(typing.get_args(grammar.ControlKind)) <= set(typing.get_args(grammar.CommandKind))


def test_every_acting_kind_has_its_handler_and_no_handler_is_for_another():
    assert set(commands.HANDLERS) == set(typing.get_args(grammar.ActingKind))


def test_each_control_word_parses_to_its_own_kind():
    for word in grammar.CONTROL_WORDS:
        command = grammar.parse(f"@bot {word}", "bot", ("codex",))
        assert command is not None and command.kind == word
