"""The sandbox package's facade (`from sandbox import select_spawner, doctor_checks,
container_caps`) sits above its modules without a cycle. Python runs a package's __init__ before
any of its modules, so each module depends on its package; the facade may reach its modules only
from inside its functions (run after the package is whole), and no module may use the facade."""
from __future__ import annotations

from tests.architecture.imports import graph

FACADE = "sandbox"


def inside(module: str) -> bool:
    return module.startswith(f"{FACADE}.")


def test_importing_a_sandbox_module_runs_none_of_the_others_through_the_facade():
    assert {m for m in graph(top_level_only=True)[FACADE] if inside(m)} == set()


def test_no_sandbox_module_uses_the_facade():
    assert sorted(m for m, targets in graph().items() if inside(m) and FACADE in targets) == []

