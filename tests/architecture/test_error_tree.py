"""The tree drawn in bot/errors.py's docstring is the tree of BotError classes: every subclass in
every bot module is named there with its module and under its parent, so a new one cannot be
forgotten and a removed one cannot linger."""
from __future__ import annotations

import importlib
import re

import bot.errors
from bot.errors import BotError
from tests.architecture.imports import project_modules

BRANCH = re.compile(r"^(?P<indent>[ │]*)[├└]── (?P<name>\w+)\s+(?P<module>bot(?:\.\w+)*)\b")


def classes_in_code() -> dict[str, tuple[str, str]]:
    """name -> (module, parent) for every BotError subclass the bot's modules define."""
    for name in project_modules():
        if name.startswith("bot") and not name.endswith("__main__"):
            importlib.import_module(name)
    found: dict[str, tuple[str, str]] = {}
    pending: list[type[BaseException]] = [BotError]
    while pending:
        parent = pending.pop()
        for cls in parent.__subclasses__():
            if cls.__module__.startswith("bot."):  # a test's own subclass is no part of the tree
                found[cls.__name__] = (cls.__module__, parent.__name__)
                pending.append(cls)
    return found


def classes_in_docstring() -> dict[str, tuple[str, str]]:
    """name -> (module, parent) as the docstring draws them (four columns per level)."""
    found: dict[str, tuple[str, str]] = {}
    parents = ["BotError"]
    for line in (bot.errors.__doc__ or "").splitlines():
        match = BRANCH.match(line.strip("\n")[4:])  # the tree is indented by four spaces
        if match is None:
            continue
        depth = len(match["indent"]) // 4
        del parents[depth + 1:]
        found[match["name"]] = (match["module"], parents[depth])
        parents.append(match["name"])
    return found


def test_the_docstring_names_every_bot_error_with_its_module():
    drawn = {name: module for name, (module, _) in classes_in_docstring().items()}
    assert {name: module for name, (module, _) in classes_in_code().items()} == drawn


def test_the_docstring_draws_each_bot_error_under_its_parent():
    drawn = {name: parent for name, (_, parent) in classes_in_docstring().items()}
    assert {name: parent for name, (_, parent) in classes_in_code().items()} == drawn
