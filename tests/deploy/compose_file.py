"""compose.yaml as an engine reads it: YAML merge keys applied, `${NAME:-default}` read as its default."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "compose.yaml"
_VARIABLE = re.compile(r"\$\{(?P<name>[A-Z_][A-Z0-9_]*)(?::?-(?P<default>[^}]*)|:?\?[^}]*)?\}")


def load() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def with_defaults(text: str) -> str:
    """The text as compose substitutes it when none of its variables is set."""
    return _VARIABLE.sub(lambda m: m["default"] or "", text)


def seconds(duration: str) -> float:
    """A compose duration (`60s`, `1m30s`) in seconds."""
    units = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", duration)
    assert parts and "".join(n + u for n, u in parts) == duration, duration
    return sum(float(n) * units[u] for n, u in parts)


def bytes_of(size: str | int) -> int:
    """A compose byte size (`2g`, `512m`, `1024`): binary units, as the engines read them."""
    units = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    found = re.fullmatch(r"(\d+)([bkmg]?)", str(size).lower())
    assert found, size
    return int(found[1]) * units[found[2]]
