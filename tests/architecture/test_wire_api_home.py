"""One home per wire API: no module of the bot but the API's own record
(bot/relay/wire_apis/<api>.py) names it in its code (a string literal that is not a docstring), so
a fact about an API is declared once and read from its record (bot/relay/wire_api.py). The modules
below name a word that is also an API's name for another reason: the provider or product of the
same name."""
from __future__ import annotations

import ast
from pathlib import Path

from bot.relay import wire_api
from tests.architecture.imports import ROOT, parsed

RECORDS = ROOT / "bot" / "relay" / "wire_apis"
ELSEWHERE = {
    "bot/job/replies.py": "the provider Anthropic's name as a person reads it",
    "bot/intake/grammar.py": "the product names people may type for an agent the bot does not have",
}


def names_in_code(path: Path, words: set[str]) -> list[tuple[int, str]]:
    """The string literals of the module's code (docstrings left out) that are one of `words`."""
    tree = parsed(path)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in words
                  and id(node) not in docstrings)


def _named() -> dict[str, list[tuple[int, str]]]:
    apis = set(wire_api.names())
    return {str(path.relative_to(ROOT)): found for path in sorted((ROOT / "bot").rglob("*.py"))
            if (found := names_in_code(path, apis))}


def test_every_built_in_api_is_declared_in_a_module_of_its_own_name():
    homes = {api.name: (RECORDS / f"{api.name}.py").exists() for api in wire_api.records()}
    assert homes == dict.fromkeys(wire_api.names(), True)


def test_no_module_but_its_record_names_a_wire_api():
    offenders = {path: [(line, word) for line, word in found if path != f"bot/relay/wire_apis/{word}.py"]
                 for path, found in _named().items() if path not in ELSEWHERE}
    assert {path: found for path, found in offenders.items() if found} == {}


def test_every_module_allowed_to_share_a_word_with_an_api_still_does():
    named = _named()
    assert [path for path in ELSEWHERE if path not in named] == []


def test_the_names_check_finds_a_name_in_code_and_not_in_a_docstring(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""Speaks "chat"."""\nAPI = "chat"\n\n\ndef f():\n    """chat"""\n    return "gemini"\n')
    assert names_in_code(module, {"chat", "gemini"}) == [(2, "chat"), (7, "gemini")]
