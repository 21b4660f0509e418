"""After `make serve` the `bot` command is in the project's virtual environment, not on the PATH:
the README says so before it first names `bot run`, `bot doctor` or `bot runs`, and `make serve`
prints it, with the line that puts it on the PATH."""
from __future__ import annotations

import re

from tests.cli.conftest import ROOT

PATH_LINE = 'export PATH="$PWD/.venv/bin:$PATH"'


def _recipe(target: str) -> str:
    text = (ROOT / "Makefile").read_text()
    found = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", text, re.M)
    assert found, f"no {target} target"
    return found.group(1)


def test_the_readme_says_where_the_command_is_before_it_uses_it():
    readme = (ROOT / "README.md").read_text()
    first_use = min(readme.index(f"`bot {word}") for word in ("run", "doctor", "runs"))
    up_to_it = readme[:readme.index("\n\n", first_use)]  # that paragraph, and what comes before it
    assert ".venv/bin/bot" in up_to_it and PATH_LINE in up_to_it


def test_make_serve_prints_where_the_command_is_and_the_path_line():
    recipe = _recipe("serve")
    assert "$(BIN)/bot" in recipe and "echo" in recipe and "PATH" in recipe
    printed = recipe[:recipe.index("$(BIN)/bot serve")]
    assert "export PATH=" in printed
