"""Dependencies point one way: entry points (cli) → web → settings → service → job → bridge, relay →
workspace, github, credentials → record → the kernel (config, retry, permissions) → adapters,
sandbox. adapters/ and sandbox/ never import bot."""
from __future__ import annotations

import pytest

from tests.architecture.imports import cycles, graph, project_modules

# a package may import packages of a lower rank (and itself), never of an equal or higher one
RANKS = {
    "adapters": 1, "sandbox": 1,
    "bot": 2, "bot.errors": 1.5,
    "bot.config": 2,  # the kernel: the settings (kinds, the table of variables, the stored App), then retries
    "bot.metrics": 2.5, "bot.logs": 2.5,  # every layer may count and log into them
    "bot.retry": 3, "bot.permissions": 3, "bot.loopback": 3,
    "bot.trigger_table": 3,  # the automatic triggers: read by the configuration model and the intake above it
    "bot.cron": 3,  # the cron grammar: read by the configuration model and the automations above it
    "bot.db": 3.5,
    "bot.record": 4,
    "bot.credentials": 5, "bot.github": 5, "bot.workspace": 5,
    "bot.review": 5.5,  # diff lines, findings, merge, the review payload: below the bridge that offers its tools
    "bot.bridge": 6, "bot.relay": 6,
    "bot.episode": 6.5,  # one CLI turn's mechanics: below the job that drives it, knowing no GitHub thread
    "bot.job": 7,
    "bot.intake": 6.8,  # what an event asks (grammar, triggers, the job spec), a pure decision: below the job it starts
    "bot.service": 8,
    "bot.automations": 7.8,  # runs on events and schedules: above the job and intake, called by the worker
    "bot.settings": 9,
    "bot.web": 10,
    "bot.cli": 11,
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
