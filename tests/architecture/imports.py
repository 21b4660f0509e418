"""The project's import graph, read from the source with ast (nothing is imported)."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "adapters", "sandbox")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}


@functools.cache
def source(path: Path) -> str:
    """A file's text, read once per session (every architecture test reads the same files)."""
    return path.read_text()


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per session. Callers must not change it."""
    return ast.parse(source(path), filename=str(path))


def imported_names(path: Path, *, top_level_only: bool = False) -> set[str]:
    """The project modules an `import` or `from … import` in the file depends on: `from pkg
    import submodule` depends on the submodule, `from pkg import name` on the package."""
    modules = project_modules()
    tree = parsed(path)
    nodes = tree.body if top_level_only else ast.walk(tree)
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules.keys()
            names.update(submodules)
            if len(submodules) < len(node.names):
                names.add(node.module)
    return names


@functools.cache
def graph(*, top_level_only: bool = False) -> dict[str, set[str]]:
    """module -> the project modules it imports."""
    modules = project_modules()
    return {name: {n for n in imported_names(path, top_level_only=top_level_only) if n in modules and n != name}
            for name, path in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
