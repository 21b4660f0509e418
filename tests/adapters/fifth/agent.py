"""The fifth agent's adapter, written in this test package only: everything the bot knows about the
CLI (fifth_cli.py) is declared here, and no other file of the bot names it. An installed package
adds it under the `bot.adapters` entry-point group (plugin.py writes that package's metadata)."""
from __future__ import annotations

import re

from adapters.base import CliAdapter, Episode, Event, EventKind, Invocation, Loaders, RelayChannel, Usage
from adapters.facts import OPENAI_API, CredentialKind


class Fifth(CliAdapter):
    name = "fifth"
    executable = "fifth"
    default_allowed_hosts = ("api.openai.com",)
    unobserved = ("fifth's model calls",)
    min_version = "1.0.0"
    credential_env = ("FIFTH_API_KEY",)
    session_id_pattern = re.compile(r"fifth-[0-9a-f]{32}")
    resume_state = (".fifth/sessions/*.json",)
    relay_channels = (RelayChannel("FIFTH_API_KEY", "openai", True, ("FIFTH_API_KEY",)),)
    loaders = Loaders(project=(".fifth",), home=(".fifth/plugins",))
    credential_kinds = (CredentialKind("api_key", "Fifth API key", "The key of the fifth agent's provider.",
                                       env=("FIFTH_API_KEY",), shape=OPENAI_API),)

    def command(self, episode: Episode) -> Invocation:
        argv = [self.binary] + (["--resume", episode.resume_session] if episode.resume_session else [])
        env = dict(episode.credentials.env)
        base = self.base_url(episode)
        if base:
            env["FIFTH_BASE_URL"] = base
        if episode.bridge:
            env["FIFTH_MCP_URL"] = episode.bridge.url
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
        if kind == "usage":
            spent = Usage(int(obj.get("prompt_tokens") or 0), int(obj.get("completion_tokens") or 0))
            return [Event(EventKind.USAGE, usage=spent, raw=raw)]
        return []
