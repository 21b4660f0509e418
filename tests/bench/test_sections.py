"""`python -m bench` runs every section in one process: what one section sets in the
environment must not reach the next."""
from __future__ import annotations

import os
import sys
import types

import pytest

from bench.__main__ import main


def _section(monkeypatch: pytest.MonkeyPatch, name: str, run: types.FunctionType) -> None:
    module = types.ModuleType(f"bench.{name}")
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, f"bench.{name}", module)


def test_a_sections_environment_is_restored_before_the_next_section(monkeypatch):
    monkeypatch.delenv("BOT_DATABASE_URL", raising=False)
    monkeypatch.setenv("BOT_DATA_DIR", "/the/operators/data")
    seen: dict[str, str | None] = {}

    def leaky() -> list[str]:
        os.environ["BOT_DATABASE_URL"] = "postgresql://gone/db"
        os.environ["BOT_DATA_DIR"] = "/tmp/removed"
        return []

    def reader() -> list[str]:
        seen.update(url=os.environ.get("BOT_DATABASE_URL"), data=os.environ.get("BOT_DATA_DIR"))
        return []

    _section(monkeypatch, "leaky_probe", leaky)
    _section(monkeypatch, "reader_probe", reader)
    assert main(["leaky_probe", "reader_probe"]) == 0
    assert seen == {"url": None, "data": "/the/operators/data"}


def test_a_failing_sections_environment_is_restored_too(monkeypatch):
    monkeypatch.delenv("BOT_SECRET_KEY", raising=False)

    def broken() -> list[str]:
        os.environ["BOT_SECRET_KEY"] = "k"
        raise RuntimeError("the section broke")

    _section(monkeypatch, "broken_probe", broken)
    assert main(["broken_probe"]) == 1
    assert "BOT_SECRET_KEY" not in os.environ
