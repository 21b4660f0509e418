"""The sixth agent's adapter, written in this test package only: a CLI (sixth_cli.py) that speaks
the sixth wire API (api.py) through the model relay. Declared here alone; an installed package adds
it under the `bot.adapters` entry-point group (plugin.py)."""
from __future__ import annotations

import re

from adapters.base import CliAdapter, Episode, Event, EventKind, Invocation, Loaders, RelayChannel, Usage
from adapters.facts import ANTHROPIC_API, CredentialKind
from tests.relay.sixth.api import PROVIDER


class Sixth(CliAdapter):
    name = "sixth"
    executable = "sixth"
    unobserved = ("sixth's model calls",)
    min_version = "1.0.0"
    credential_env = ("SIXTH_API_KEY",)
    session_id_pattern = re.compile(r"sixth-[0-9a-f]{32}")
    resume_state = (".sixth/sessions/*.json",)
    relay_channels = (RelayChannel("SIXTH_API_KEY", PROVIDER, False, ("SIXTH_API_KEY",)),)
    loaders = Loaders(project=(".sixth",), home=(".sixth/plugins",))
    credential_kinds = (CredentialKind("api_key", "Sixth API key", "The key of the sixth agent's provider.",
                                       env=("SIXTH_API_KEY",), shape=ANTHROPIC_API),)

    def command(self, episode: Episode) -> Invocation:
        argv = [self.binary] + (["--resume", episode.resume_session] if episode.resume_session else [])
        env = dict(episode.credentials.env)
        base = self.base_url(episode)
        if base:
            env["SIXTH_BASE_URL"] = base
        if episode.bridge:
            env["SIXTH_MCP_URL"] = episode.bridge.url
            env[episode.bridge.token_env] = episode.bridge.token
        return Invocation(argv=argv, env=env, stdin=episode.prompt.encode())

    def _parse(self, obj: dict, raw: bytes) -> list[Event]:
        kind = obj.get("type")
        if kind == "session":
            return [Event(EventKind.SESSION, session_id=str(obj.get("id")), raw=raw)]
        if kind == "text":
            return [Event(EventKind.TEXT, text=str(obj.get("text") or ""), raw=raw)]
        if kind == "tools":
            return [Event(EventKind.PROGRESS, text=f"tools: {len(obj.get('names') or [])}", raw=raw)]
        if kind == "spent":
            return [Event(EventKind.USAGE, usage=Usage(int(obj.get("in") or 0), int(obj.get("out") or 0)), raw=raw)]
        return []
