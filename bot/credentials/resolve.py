"""Which credentials an episode gets, and from whom (docs/settings.md).

First match wins: the requester's own → the repository's → the installation's → the operator's
environment → None, and the pipeline answers with `auth_required_message(...)`.
Values reach the CLI only through its environment or a file in its episode HOME. Every lookup takes
the entry point's settings: the operator's environment is theirs, and so are the vault's key and
database.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from adapters import base as adapters
from adapters.base import Credentials
from adapters.facts import CredentialKind
from bot.config import Settings
from bot.credentials import vault as secrets
from bot.db import Database
from bot.errors import BotError


@dataclass(frozen=True)
class Kind:
    """One way an agent CLI can authenticate, as a user connects it on the settings page: the
    agent's own declaration (its adapter's `credential_kinds`), named for the agent."""

    agent: str
    kind: str
    label: str
    hint: str
    env: tuple[str, ...] = ()  # the value is set in each of these variables
    file: str | None = None  # or written to this HOME-relative path
    json_file: bool = False
    shape: str | None = None  # a key's shape (bot/credentials/shapes.py)
    json_check: Callable[[object], str | None] | None = None  # why a JSON document is not one, or None

    @classmethod
    def declared(cls, agent: str, kind: CredentialKind) -> Kind:
        return cls(agent, kind.kind, kind.label, kind.hint, kind.env, kind.file, kind.json_file, kind.shape,
                   kind.json_check)

    @property
    def name(self) -> str:
        return f"{self.agent}:{self.kind}"


def all_kinds() -> tuple[Kind, ...]:
    """Every agent's credential kinds, the agents in the registry's order and each agent's kinds in
    its order of preference when one scope holds several."""
    return tuple(kind for agent in adapters.names() for kind in kinds_for(agent))


SOURCES = (("requester", "user"), ("repository", "repo"), ("installation", "installation"))
class InvalidCredential(BotError, ValueError):
    """A pasted value cannot be what it claims to be; the message never repeats the value."""


def kinds_for(agent: str) -> list[Kind]:
    return [Kind.declared(agent, kind) for kind in adapters.get(agent).credential_kinds]


def find_kind(name: str) -> Kind | None:
    """The kind for a stored secret name such as "claude:api_key"."""
    return next((k for k in all_kinds() if k.name == name), None)


def normalise(kind: Kind, value: str) -> str:
    """The value as it will be stored: trimmed, and for file kinds checked to be a JSON object."""
    value = value.strip()
    if not value:
        raise InvalidCredential(f"{kind.label}: the value is empty")
    if kind.json_file:
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            raise InvalidCredential(f"{kind.label}: expected the JSON content of the file") from None
        if not isinstance(parsed, dict):
            raise InvalidCredential(f"{kind.label}: expected a JSON object")
    elif any(ch.isspace() for ch in value):
        raise InvalidCredential(f"{kind.label}: a key or token has no spaces or line breaks")
    return value


def connect(settings: Settings, scope: str, kind: Kind, value: str, *, actor: str) -> str:
    """Store a credential for a scope; returns its fingerprint."""
    return secrets.put(scope, kind.name, normalise(kind, value), actor=actor, settings=settings)


def disconnect(settings: Settings, scope: str, kind: Kind, *, actor: str) -> bool:
    return secrets.delete(scope, kind.name, actor=actor, settings=settings)


def as_credentials(kind: Kind, value: str, source: str) -> Credentials:
    env = {var: value for var in kind.env}
    files = {kind.file: value.encode()} if kind.file else {}
    return Credentials(env=env, files=files, source=source)


@dataclass(frozen=True)
class Origin:
    """Where resolved credentials come from: the scope and kind of a stored key, or the operator's
    variable. The settings pages show it; the run's record names it (never the value)."""

    credentials: Credentials
    scope: str | None = None  # e.g. "repo:1296269" (the repository's id); None for the operator's environment
    kind: Kind | None = None
    variable: str | None = None  # the operator's variable, or "auth.json"

    @property
    def source(self) -> str:
        return self.credentials.source


def resolve(settings: Settings, agent: str, repo_id: int | None, requester: int | None,
            installation_id: int | str | None) -> Credentials | None:
    """The first credentials found for `agent`: requester → repository → installation → operator.
    The requester and the repository are GitHub ids, never names: a login or a repository can be
    renamed and the name taken again by someone else, who must not inherit the keys."""
    origin = resolve_origin(settings, agent, repo_id, requester, installation_id)
    return origin.credentials if origin else None


def resolve_origin(settings: Settings, agent: str, repo_id: int | None, requester: int | None,
                   installation_id: int | str | None, *, db: Database | None = None) -> Origin | None:
    """`resolve`, saying where the credentials come from. `db`: the job's open connection, so a
    job opens no second one to look its keys up."""
    owners = {"user": requester, "repo": repo_id, "installation": installation_id}
    for source, scope_kind in SOURCES:
        owner = owners[scope_kind]
        if owner is None or owner == "" or owner == 0:
            continue
        found = _stored(settings, agent, secrets.scope_for(scope_kind, owner), source, db)
        if found:
            return found
    return operator_origin(settings, agent)


def _stored(settings: Settings, agent: str, scope: str, source: str, db: Database | None) -> Origin | None:
    present = secrets.names(scope, settings, db=db)
    for kind in kinds_for(agent):
        if kind.name in present:
            value = secrets.get(scope, kind.name, settings, db=db)
            if value:
                return Origin(as_credentials(kind, value, source), scope, kind)
    return None


def operator_origin(settings: Settings, agent: str) -> Origin | None:
    """What the operator's environment provides for `agent`, and in which variable, or None."""
    for var in operator_env_names(settings, agent):
        value = settings.provider_credential(var)
        if value:
            return Origin(Credentials(env={var: value}, source="operator"), variable=var)
    login = adapters.get(agent).operator_login
    found = operator_login_file(settings, agent)
    if login is not None and found is not None:
        return Origin(Credentials(files={login.path: found.read_bytes()}, source="operator"),
                      variable=Path(login.path).name)
    return None


def operator_credentials(settings: Settings, agent: str) -> Credentials | None:
    """What the operator's environment provides for `agent`, or None."""
    origin = operator_origin(settings, agent)
    return origin.credentials if origin else None


def operator_env_names(settings: Settings, agent: str) -> list[str]:
    """The operator variables consulted for `agent`, in order: its adapter's declaration, for what
    the operator configured (a CLI that speaks to several providers reads the chosen one's key)."""
    return list(adapters.get(agent, settings.operator_for(agent)).operator_variables())


def operator_login_file(settings: Settings, agent: str) -> Path | None:
    """The operator's own login file for `agent` (its adapter's `operator_login`: the file the bot's
    setting names, else the one in the CLI's home variable, else under ~), or None."""
    login = adapters.get(agent).operator_login
    if login is None:
        return None
    home = settings.text(login.home_variable)
    name = Path(login.path).name
    for candidate in (settings.text(login.setting), str(Path(home) / name) if home else None,
                      str(Path(os.path.expanduser("~")) / login.path)):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def operator_agents(settings: Settings) -> list[str]:
    """The agents the operator's environment can run without anyone's own key."""
    return [agent for agent in adapters.names() if operator_credentials(settings, agent) is not None]


def settings_url(settings: Settings) -> str | None:
    """The settings page's public address, when the service has one (BOT_PUBLIC_URL) and people can
    sign in there (GitHub login: GITHUB_CLIENT_ID and GITHUB_CLIENT_SECRET); without the login that
    page only says settings are not configured."""
    base = settings.text("BOT_PUBLIC_URL")
    return f"{base.rstrip('/')}/settings" if base and settings.oauth_login else None


_at_terminal = False  # `bot run`: the operator is the person at the terminal


def speak_to_the_terminal() -> None:
    """This process is `bot run`: the operator's environment is the shell of the person reading."""
    global _at_terminal
    _at_terminal = True


def operator_fix_hint(what: str) -> str:
    """How a rejected credential of the operator's environment (`what`: a variable, or the
    ChatGPT login) is replaced, worded for whoever reads it."""
    if not _at_terminal:
        return f"the operator must replace {what} in the bot's environment"
    if what.isupper():
        return f"set a working {what} in your environment and run `bot run` again"
    return f"replace {what} (for Codex: `codex login` again) and run `bot run` again"


def auth_required_message(settings: Settings, agent: str, repo: str | None = None) -> str:
    """The sentence the pipeline posts when `resolve` found nothing."""
    what = " or ".join(k.label for k in kinds_for(agent)) or "a credential"
    url = settings_url(settings)
    if url:
        if not repo:
            return f"I have no credentials to run {agent}. Connect your own {what} at {url}."
        return (f"I have no credentials to run {agent} for {repo}. Connect your own {what} at {url}, "
                f"or a repository admin or maintainer can connect one for everyone at {url}/repos/{repo}.")
    names = " or ".join(f"`{n}`" for n in operator_env_names(settings, agent)) or "its API key"
    return (f"I have no credentials to run {agent}. Set {names} in the bot's environment "
            f"(in a workflow: a repository secret passed to this step's `env:`).{_gateway_note(settings, agent)}")


def _gateway_note(settings: Settings, agent: str) -> str:
    """With an operator gateway, the key is what the relay hands the gateway: say so, since a gateway
    that checks no key still needs one set."""
    variable = f"BOT_{agent.upper()}_BASE_URL"
    if not settings.agent_base_url(agent):
        return ""
    return (f" The gateway `{variable}` gets that key as its credential: set the gateway's own key, or any "
            "placeholder when the gateway asks for none.")
