"""A "CLI" for the sandbox tests: a shell script run in the sandbox, whose stdout lines
{"text": …} are its answer, so an episode can be driven without a real agent."""
from __future__ import annotations

from adapters.base import CliAdapter, Episode, Event, EventKind, Invocation


class ShellAdapter(CliAdapter):
    name = "shell"

    def __init__(self, script: str):
        self.script = script

    def command(self, episode: Episode) -> Invocation:
        return Invocation(argv=["sh", "-c", self.script])

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        return [Event(EventKind.TEXT, text=str(obj["text"]), raw=raw)]
