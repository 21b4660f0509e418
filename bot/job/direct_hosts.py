"""The provider hosts a CLI may reach in direct mode (its key in the sandbox, no relay in between).

Claude Code, Codex and Gemini each speak to one provider: their adapter's own list. OpenCode can
hold the key of any provider it supports, so its list (Anthropic and OpenAI) fits none in
particular: the sandbox gets exactly the host of the provider whose key it holds (a key variable,
or a login in its `auth.json`), and, when the operator named the provider, only that one. A key of
a provider the bot does not know (a custom provider), or a run at the operator's gateway (reached
as a gateway, not a host), opens no provider host.
"""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from adapters.base import Credentials
from bot import config
from bot.credentials.resolve import OPENCODE_PROVIDER_ENV
from bot.relay.apis import DEFAULT_BASE

OPENCODE_AUTH = "OPENCODE_AUTH_CONTENT"  # OpenCode's auth.json, as the settings page stores it


def open_provider_hosts(sandbox_config: Any, agent: str, adapter: Any, creds: Credentials) -> None:
    """The sandbox's egress in direct mode: the adapter's provider hosts give way to `direct_hosts`;
    the repository's own hosts stay."""
    defaults = tuple(getattr(adapter, "default_allowed_hosts", ()))
    chosen = direct_hosts(agent, defaults, creds)
    allowed = tuple(sandbox_config.allowed_hosts)
    sandbox_config.allowed_hosts = tuple(h for h in allowed if h not in defaults or h in chosen) + \
        tuple(h for h in chosen if h not in allowed)


def direct_hosts(agent: str, adapter_hosts: tuple[str, ...], creds: Credentials) -> tuple[str, ...]:
    if agent != "opencode":
        return adapter_hosts
    if config.agent_base_url(agent):
        return ()
    held = _opencode_providers(creds)
    named = config.env("BOT_OPENCODE_PROVIDER") or (config.agent_model(agent) or "").partition("/")[0]
    chosen = [named] if named in held else sorted(held)
    return tuple(urlsplit(DEFAULT_BASE[provider]).hostname or "" for provider in chosen)


def _opencode_providers(creds: Credentials) -> set[str]:
    """The known providers whose key or login the credentials hold."""
    held = {provider for provider, variable in OPENCODE_PROVIDER_ENV.items() if creds.env.get(variable)}
    try:
        logins = json.loads(creds.env.get(OPENCODE_AUTH) or "{}")
    except ValueError:
        logins = {}
    if isinstance(logins, dict):
        held |= {provider for provider in logins if provider in OPENCODE_PROVIDER_ENV}
    return held
