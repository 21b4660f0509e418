"""Configuration lives in one place: bot/config/__init__.py's table, documented in docs/configuration.md."""
from __future__ import annotations

import ast
import re

from bot import config
from tests.architecture.imports import ROOT, parsed, project_modules

DOC = ROOT / "docs" / "configuration.md"
ROW = re.compile(r"^\| `(?P<name>[A-Z_<>]+)` \| (?P<default>[^|]+) \|", re.M)


def documented() -> dict[str, str]:
    return {m["name"]: m["default"].strip() for m in ROW.finditer(DOC.read_text())}


def shown(default: str | None, name: str) -> str:
    if name == "BOT_AGENTS_DIR":
        return "`<project>/agents-cli`"
    return "—" if default is None else f"`{default}`"


def test_every_variable_is_documented_with_its_default():
    assert documented() == {v.name: shown(v.default, v.name) for v in config.VARIABLES}


def test_each_variable_has_one_entry():
    names = [v.name for v in config.VARIABLES]
    assert len(names) == len(set(names))


def _environment_reads(path) -> list[str]:
    """`os.environ.get(...)`, `os.environ[...]` and `os.getenv(...)` reads of a literal name."""
    reads = []
    for node in ast.walk(parsed(path)):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            owner = ast.unparse(node.func.value)
            if (owner == "os.environ" and node.func.attr == "get") or ast.unparse(node.func) == "os.getenv":
                target = node.args[0]
        elif (isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ"
              and isinstance(node.ctx, ast.Load)):  # the Action sets defaults for itself
            target = node.slice
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            reads.append(target.value)
    return reads


def test_only_config_reads_bot_variables_from_the_environment():
    config_file = ROOT / "bot" / "config.py"
    offenders = {name: reads for name, path in project_modules().items() if path != config_file
                 for reads in [[r for r in _environment_reads(path) if r.startswith(("BOT_", "GITHUB_"))]] if reads}
    assert offenders == {}


def test_config_calls_name_known_variables_without_a_second_default():
    offenders = []
    for name, path in project_modules().items():
        for node in ast.walk(parsed(path)):
            if (isinstance(node, ast.Call) and ast.unparse(node.func) in ("config.env", "config.value")
                    and node.args and isinstance(node.args[0], ast.Constant)):
                if len(node.args) > 1 or node.args[0].value not in {v.name for v in config.VARIABLES}:
                    offenders.append(f"{name}: {ast.unparse(node)}")
    assert offenders == []
