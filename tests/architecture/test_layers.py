"""Dependencies point one way: entry points → service → job → bridge → workspace, record, github,
credentials → adapters, sandbox. adapters/ and sandbox/ never import bot."""
from __future__ import annotations

import pytest

from tests.architecture.imports import cycles, graph, project_modules

# a package may import packages of a lower rank (and itself), never of an equal or higher one
RANKS = {
    "adapters": 1, "sandbox": 1,
    "bot": 2,
    "bot.config": 2, "bot.retry": 2, "bot.permissions": 2,  # the shared kernel: settings, retries, who may act
    "bot.record": 3, "bot.credentials": 3, "bot.github": 3, "bot.workspace": 3,
    "bot.bridge": 4, "bot.relay": 4,
    "bot.job": 5,
    "bot.service": 6,
    "bot.settings": 7,
    "bot.web": 8,
    "bot.cli": 9,
}


def area(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "bot" and len(parts) > 1 else parts[0]


def upward_imports() -> list[str]:
    found = []
    for module, targets in graph().items():
        for target in targets:
            source_area, target_area = area(module), area(target)
            if source_area != target_area and RANKS[target_area] >= RANKS[source_area]:
                found.append(f"{module} imports {target}")
    return sorted(found)


def test_every_area_has_a_rank():
    assert {area(m) for m in project_modules()} - {"bot"} <= set(RANKS)


@pytest.mark.parametrize("package", ["adapters", "sandbox"])
def test_package_never_imports_bot(package):
    offenders = {m: sorted(t for t in targets if t == "bot" or t.startswith("bot."))
                 for m, targets in graph().items() if area(m) == package}
    assert {m: t for m, t in offenders.items() if t} == {}


def test_dependencies_point_one_way():
    assert upward_imports() == []


def test_no_import_cycle_between_modules():
    assert cycles(graph()) == []
