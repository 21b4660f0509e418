"""The provider hosts a CLI may reach in direct mode (its key in the sandbox, no relay in between).

A CLI that speaks to one provider reaches its adapter's own list. One that can hold the key of any
of several providers (its adapter declares `provider_keys`: OpenCode) fits no list in particular:
the sandbox gets exactly the host of the provider whose key it holds (a key variable, or a login
in its `provider_logins`), and, when the operator named the provider, only that one. A key of a
provider the bot does not know (a custom provider), or a run at the operator's gateway (reached as
a gateway, not a host), opens no provider host.
"""
from __future__ import annotations

import json
from urllib.parse import urlsplit

from adapters.base import Adapter, Credentials, Operator
from bot.relay.apis import DEFAULT_BASE
from sandbox.base import SandboxConfig


def open_provider_hosts(sandbox_config: SandboxConfig, adapter: Adapter, creds: Credentials,
                        operator: Operator) -> None:
    """The sandbox's egress in direct mode: the adapter's provider hosts give way to `direct_hosts`;
    the repository's own hosts stay. `operator`: what the operator configured for this agent."""
    defaults = tuple(adapter.default_allowed_hosts)
    chosen = direct_hosts(adapter, creds, operator)
    allowed = tuple(sandbox_config.allowed_hosts)
    sandbox_config.allowed_hosts = tuple(h for h in allowed if h not in defaults or h in chosen) + \
        tuple(h for h in chosen if h not in allowed)


def direct_hosts(adapter: Adapter, creds: Credentials, operator: Operator) -> tuple[str, ...]:
    keys = dict(adapter.provider_keys)
    if not keys:
        return tuple(adapter.default_allowed_hosts)
    if operator.base_url:
        return ()
    held = _providers_held(keys, adapter.provider_logins, creds)
    named = operator.provider or (operator.model or "").partition("/")[0]
    chosen = [named] if named in held else sorted(held)
    return tuple(urlsplit(DEFAULT_BASE[provider]).hostname or "" for provider in chosen if provider in DEFAULT_BASE)


def _providers_held(keys: dict[str, str], logins_variable: str, creds: Credentials) -> set[str]:
    """The known providers whose key or login the credentials hold."""
    held = {provider for provider, variable in keys.items() if creds.env.get(variable)}
    try:
        logins = json.loads(creds.env.get(logins_variable) or "{}") if logins_variable else {}
    except ValueError:
        logins = {}
    if isinstance(logins, dict):
        held |= {provider for provider in logins if provider in keys}
    return held
