"""Every command and option says what it does; `bot --version` answers."""
from __future__ import annotations

import argparse
import importlib
from importlib import metadata

import pytest

from bot.cli import main as cli


class Parsed(Exception):  # noqa: N818 - a test signal: the command built its parser
    pass


def parsers_of(command: str, monkeypatch) -> list[argparse.ArgumentParser]:
    """The command's parser and every subcommand's, as its main() builds them."""
    built: list[argparse.ArgumentParser] = []

    def capture(self, args=None, namespace=None):
        built.append(self)
        raise Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    with pytest.raises(Parsed):
        importlib.import_module(cli.COMMANDS[command][0]).main([])
    found = list(built)
    for parser in built:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                found += list(action.choices.values())
    return found


def test_version_prints_the_installed_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"bot {metadata.version('github-agent-bot')}"


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_option_has_help(command, monkeypatch):
    missing = [f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
               for parser in parsers_of(command, monkeypatch) for action in parser._actions
               if not isinstance(action, argparse._SubParsersAction) and not action.help]
    assert missing == []


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_help_names_no_design_section(command, monkeypatch):
    texts = [parser.format_help() for parser in parsers_of(command, monkeypatch)]
    assert [text for text in texts if "DESIGN" in text or "§" in text] == []
