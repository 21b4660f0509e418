"""Shared helpers for the adapter tests: replaying recorded transcripts through an adapter."""
from __future__ import annotations

from pathlib import Path

from adapters import base
from adapters.base import Bridge, Episode, Event, Result

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "cli"


def transcript(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines()


def parse_all(agent: str, lines: list[bytes]) -> list[Event]:
    adapter = base.get(agent)
    return [event for line in lines for event in adapter.parse(line)]


def episode(tmp_path: Path, **overrides) -> Episode:
    fields = dict(prompt="Say hello", workdir="/workspace", home=tmp_path / "home")
    fields.update(overrides)
    return Episode(**fields)


def bridge() -> Bridge:
    return Bridge(url="http://127.0.0.1:8765/mcp", token="bridge-token-value-123456",
                  tools=("read_thread", "write_file"))


def replay(agent: str, name: str, exit_code: int = 0, *, stderr: str = "", last_message: str | None = None,
           ep: Episode | None = None) -> Result:
    """The Result an adapter builds from a recorded transcript and the recorded exit code."""
    adapter = base.get(agent)
    events = parse_all(agent, transcript(name))
    ep = ep or Episode(prompt="p", workdir="/workspace", home=Path("/nonexistent/home"))
    return adapter.finish(ep, events, exit_code, stderr, last_message)
