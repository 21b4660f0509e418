"""One exception hierarchy with distinct names: every public exception of bot/ is a BotError."""
from __future__ import annotations

import ast
import importlib
from collections import Counter

from bot.errors import BotError
from tests.architecture.imports import parsed, project_modules


def public_exception_classes() -> list[tuple[str, type]]:
    found = []
    for name, path in project_modules().items():
        if not name.startswith("bot"):
            continue
        for node in parsed(path).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                cls = getattr(importlib.import_module(name), node.name)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found.append((name, cls))
    return found


def test_every_public_exception_of_the_bot_is_a_bot_error():
    assert [f"{module}.{cls.__name__}" for module, cls in public_exception_classes()
            if not issubclass(cls, BotError)] == []


def test_no_two_exceptions_share_a_name():
    names = Counter(cls.__name__ for _, cls in public_exception_classes())
    assert [name for name, count in names.items() if count > 1] == []
