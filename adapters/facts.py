"""The facts about a CLI that the bot's other parts read from its adapter, declared beside the
adapter's command and parser so that one agent has one home: how a person connects its
credential (the settings page's kinds and their key shapes), which variables of the operator's
environment authenticate it, the Action's inputs and the npm package that installs it.

A fact an adapter does not declare fails closed: no credential kinds, nothing can be connected
for it on the settings page; no `npm_package`, the Action refuses to install it; no
`action_inputs`, the workflow generator refuses to write a workflow for it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# the providers' published key prefixes (bot/credentials/shapes.py holds their patterns)
ANTHROPIC_OAUTH = "anthropic_oauth"
ANTHROPIC_API = "anthropic_api"
OPENAI_API = "openai_api"
GEMINI_API = "gemini_api"


@dataclass(frozen=True)
class CredentialKind:
    """One way a person connects a credential for the CLI on the settings page: set in each of
    `env`, or written to the HOME-relative `file`. A pasted value is checked before it is stored:
    a key against its `shape`, a JSON document by `json_check` (the reason it is not one, or
    None)."""

    kind: str  # e.g. "api_key": the stored secret is named "<agent>:<kind>"
    label: str
    hint: str
    env: tuple[str, ...] = ()
    file: str | None = None
    json_file: bool = False
    shape: str | None = None  # a key's shape, one of the names above; None for a JSON document
    json_check: Callable[[object], str | None] | None = None


@dataclass(frozen=True)
class OperatorLogin:
    """A login file the CLI writes on the operator's machine (`codex login`), used when the
    operator's environment holds no key: the file the bot's `setting` names, else the file of that
    name in the CLI's own home (`home_variable`), else `~/<path>`. A refreshed login goes back there."""

    path: str  # HOME-relative, as the CLI reads it in its episode home
    setting: str  # the bot's variable naming the file
    home_variable: str  # the CLI's own home folder variable
    kind: str  # the credential kind the same login is stored as on the settings page


@dataclass(frozen=True)
class ActionInputs:
    """The Action's inputs that carry the CLI's credential: (input name, repository secret name)
    for its API key, and for a subscription token when the CLI can run on one."""

    key: tuple[str, str]
    subscription: tuple[str, str] | None = None
