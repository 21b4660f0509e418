"""The job, the service, the web app, the relay and the intake are held to mypy's --strict flags
(pyproject.toml sets them per module, since `strict` itself is global only), and no override
loosens one of them for a module inside."""
from __future__ import annotations

import tomllib

import pytest

from tests.architecture.imports import ROOT

STRICT_PACKAGES = ("bot.job", "bot.episode", "bot.service", "bot.web", "bot.relay", "bot.intake")
# mypy's --strict, the flags that can be set per module, with their strict values
STRICT_FLAGS = {"disallow_any_generics": True, "disallow_subclassing_any": True, "disallow_untyped_calls": True,
                "disallow_untyped_defs": True, "disallow_incomplete_defs": True, "check_untyped_defs": True,
                "disallow_untyped_decorators": True, "warn_return_any": True, "warn_unused_ignores": True,
                "implicit_reexport": False, "strict_equality": True, "extra_checks": True}


def mypy_config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def overrides_for(package: str) -> list[dict]:
    """The overrides whose module patterns cover the package or a module inside it."""
    def covers(pattern: str) -> bool:
        stem = pattern.removesuffix(".*")
        return stem == package or stem.startswith(package + ".") or package.startswith(stem + ".")
    return [o for o in mypy_config().get("overrides", [])
            if any(covers(p) for p in ([o["module"]] if isinstance(o["module"], str) else o["module"]))]


def effective(package: str) -> dict:
    """The flags the package's modules get: the global section, then each override in order."""
    flags = {name: value for name, value in mypy_config().items() if name in STRICT_FLAGS}
    for override in overrides_for(package):
        flags.update({name: value for name, value in override.items() if name in STRICT_FLAGS})
    return flags


@pytest.mark.parametrize("package", STRICT_PACKAGES)
def test_the_package_is_held_to_every_strict_flag(package):
    assert {name: effective(package).get(name) for name in STRICT_FLAGS} == STRICT_FLAGS


def test_redundant_casts_are_warned_about():
    assert mypy_config().get("warn_redundant_casts") is True  # strict's one flag that is global only
