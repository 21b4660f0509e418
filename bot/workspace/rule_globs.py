"""The path globs of `.github/bot.yml` `reviews.rules:` (docs/repo-config.md): a declared grammar,
matched as `.gitignore` matches.

    problem("api/[ab]")             # "`[` is not a character a glob here may hold (…)", or None
    matches("**/tests/**", "pkg/tests/unit/test_a.py")   # True

A glob is 1 to 200 characters of components split by `/`: each component is `**` (any depth) or
a name with `*` (any characters but `/`) and `?` (one of them). A leading `/` anchors it at the
root, as does a `/` in its middle; a trailing `/` matches folders only; a glob without a `/`
matches a file or folder of that name at any depth. A folder that matches covers everything
under it. Character classes, escapes and negation are not part of the grammar: refused.
"""
from __future__ import annotations

import functools
import re

MAX_GLOB_CHARS = 200
MAX_CONFIG_RULES = 100  # entries of reviews.rules
MAX_INSTRUCTION_CHARS = 2_000  # one entry's instruction
_REFUSED = "[]\\"


def problem(glob: str) -> str | None:
    """What is wrong with `glob`, or None when it is one of the grammar's."""
    if not glob.strip():
        return "an empty glob is not allowed"
    if len(glob) > MAX_GLOB_CHARS:
        return f"a glob longer than {MAX_GLOB_CHARS} characters is not allowed"
    if glob.startswith("!"):
        return "a negation (`!`) has no meaning for rules"
    if glob.startswith("#"):
        return "a glob may not start with `#` (a comment in .gitignore)"
    for char in glob:
        if char in _REFUSED or not char.isprintable():
            return f"{_named(char)} is not a character a glob here may hold (use `*`, `?`, `**` and plain names)"
    for part in _body(glob).split("/"):
        if not part:
            return "an empty component (`//`) is not allowed"
        if part in (".", ".."):
            return f"a `{part}` component is not allowed"
    return None


def matches(glob: str, path: str) -> bool:
    """Whether `glob` (of the grammar) covers the file `path`: it matches the file or a folder above it."""
    regex, folders_only = _compiled(glob)
    parts = path.strip("/").split("/")
    names = ["/".join(parts[:n]) for n in range(1, len(parts) + (0 if folders_only else 1))]
    return any(regex.fullmatch(name) for name in names)


@functools.lru_cache(maxsize=512)
def _compiled(glob: str) -> tuple[re.Pattern[str], bool]:
    body = _body(glob)
    anchored = "/" in glob.rstrip("/")
    parts = body.split("/")
    regex = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:.*/)?"
        else:
            regex += _component(part) + ("" if last else "/")
    if not anchored:
        regex = "(?:.*/)?" + regex
    return re.compile(regex, re.DOTALL), glob.endswith("/")


def _body(glob: str) -> str:
    return glob.removeprefix("/").removesuffix("/")


def _component(part: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in part)


def _named(char: str) -> str:
    return f"`{char}`" if char.isprintable() else f"U+{ord(char):04X}"
