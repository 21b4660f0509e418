"""Configuration read at the edge: `Settings`, built once by an entry point from the environment and
the App the first run stored, then handed down as settings or as the values a module needs.

The table of variables, their defaults and kinds, is bot/config/table.py. The module-level readers
at the end (`env`, `value`, `data_dir`, …) read the live environment alone and never the stored App:
they serve the modules not yet handed their settings, which tests/architecture/test_configuration.py
lists so that the list can only shrink.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType

from adapters import base
from adapters.base import Operator
from bot.config.table import (
    AGENT_PLACEHOLDER,
    APP_VARIABLES,
    PROJECT_ROOT,
    VARIABLES,
    MissingConfig,
    PartialIdentity,
    Variable,
    app_in_environment,
    check_all,
    check_identity,
    variable,
)
from sandbox.base import Host

__all__ = ["AGENT_PLACEHOLDER", "APP_VARIABLES", "PROJECT_ROOT", "VARIABLES", "MissingConfig", "PartialIdentity",
           "Settings", "SettingsRefused", "StoredApp", "Variable", "app_in_environment", "check_all",
           "check_identity", "variable"]

# The stored App's slug is the mention it answers to, unless the operator sets BOT_HANDLE.
_STORED = (*APP_VARIABLES, "BOT_HANDLE")


class SettingsRefused(MissingConfig):
    """Variables whose text is not of their kind, one line each (`check_all`)."""

    def __init__(self, lines: list[str]):
        self.lines = list(lines)
        super().__init__("; ".join(self.lines))


@dataclass(frozen=True, eq=False)
class StoredApp:
    """The GitHub App the first run's manifest flow stored (bot/settings/manifest.py), as the
    texts of the variables it stands for."""

    texts: Mapping[str, str] = field(repr=False)

    @classmethod
    def of(cls, stored: Mapping[str, object]) -> StoredApp:
        return cls(MappingProxyType({name: str(stored[name]) for name in _STORED if stored.get(name)}))


@dataclass(frozen=True, eq=False)
class Settings:
    """The bot's configuration, read once. The App's identity comes whole from the environment, or
    whole from the stored App while the environment names none of its variables, never mixed."""

    environ: Mapping[str, str] = field(repr=False)
    stored_app: StoredApp | None = field(default=None, repr=False)

    @classmethod
    def load(cls, environ: Mapping[str, str], stored_app: StoredApp | None = None) -> Settings:
        """Refuse what `check_all` and `check_identity` refuse, else a frozen copy of `environ`."""
        lines = check_all(environ)
        if lines:
            raise SettingsRefused(lines)
        check_identity(environ)
        return cls(MappingProxyType(dict(environ)), stored_app)

    def with_stored_app(self, stored_app: StoredApp | None) -> Settings:
        """These settings once the first run stored its App (the environment's own App still wins)."""
        return replace(self, stored_app=stored_app)

    def _stored_text(self, name: str) -> str | None:
        if self.stored_app is None or app_in_environment(self.environ):
            return None
        return self.stored_app.texts.get(name)

    def text(self, name: str) -> str | None:
        """The variable's text, else its one default (None when it has none). Empty counts as unset."""
        given = self.environ.get(name)
        if given in (None, ""):
            given = self._stored_text(name)
        return given if given not in (None, "") else variable(name).default

    def is_set(self, name: str) -> bool:
        """Whether the operator set the variable (its default does not count)."""
        variable(name)
        return self.environ.get(name) not in (None, "")

    def required(self, name: str, hint: str = "") -> str:
        text = self.text(name)
        if text is None:
            raise MissingConfig(f"{name} is not set." + (f" {hint}" if hint else ""))
        return text

    def parsed(self, name: str) -> object:
        """The variable parsed to its kind's type (None when unset without a default)."""
        text = self.text(name)
        return None if text is None else variable(name).parse(text)

    def whole(self, name: str) -> int:
        found = self.optional_whole(name)
        if found is None:
            raise MissingConfig(f"{name} is not set and has no default.")
        return found

    def optional_whole(self, name: str) -> int | None:
        found = self.parsed(name)
        if found is not None and (isinstance(found, bool) or not isinstance(found, int)):
            raise TypeError(f"{name} is not a whole number in the table")
        return found

    def number(self, name: str) -> float:
        found = self.optional_number(name)
        if found is None:
            raise MissingConfig(f"{name} is not set and has no default.")
        return found

    def optional_number(self, name: str) -> float | None:
        found = self.parsed(name)
        if found is not None and (isinstance(found, bool) or not isinstance(found, int | float)):
            raise TypeError(f"{name} is not a number in the table")
        return None if found is None else float(found)

    def path(self, name: str) -> Path:
        found = self.parsed(name)
        if not isinstance(found, Path):
            raise MissingConfig(f"{name} is not set and has no default.")
        return found

    def flag(self, name: str) -> bool:
        return self.parsed(name) is True

    def word(self, name: str) -> str:
        """A variable that always has a value (its own, else its default), as text."""
        found = self.parsed(name)
        if not isinstance(found, str):
            raise MissingConfig(f"{name} is not set and has no default.")
        return found

    @property
    def data_dir(self) -> Path:
        """BOT_DATA_DIR, resolved, and created when it is not there yet."""
        path = self.path("BOT_DATA_DIR").resolve()
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def handle(self) -> str:
        return self.word("BOT_HANDLE").lstrip("@")

    @property
    def default_agent(self) -> str:
        return self.word("BOT_DEFAULT_AGENT")

    @property
    def workers(self) -> int:
        return self.whole("BOT_WORKERS")

    @property
    def sandbox_tier(self) -> int:
        return self.whole("BOT_SANDBOX_TIER")

    @property
    def agents_dir(self) -> Path:
        """Where `make agents` installs the pinned CLIs (node_modules/.bin inside)."""
        return self.path("BOT_AGENTS_DIR")

    @property
    def github_api_url(self) -> str:
        return self.word("GITHUB_API_URL").rstrip("/")

    @property
    def server_url(self) -> str:
        """GitHub's web host: GITHUB_SERVER_URL, else the host of an Enterprise Server API URL
        (`https://HOST/api/v3`), else github.com."""
        api = self.github_api_url
        if not self.is_set("GITHUB_SERVER_URL") and api.endswith("/api/v3"):
            return api.removesuffix("/api/v3")
        return self.word("GITHUB_SERVER_URL").rstrip("/")

    @property
    def git_base_url(self) -> str:
        return (self.text("BOT_GIT_BASE_URL") or self.server_url).rstrip("/")

    @property
    def oauth_url(self) -> str:
        """Where the settings sign-in and the App manifest form go."""
        return (self.text("BOT_GITHUB_OAUTH_URL") or self.server_url).rstrip("/")

    def run_url(self, run_id: str) -> str | None:
        """The live run page of a run (bot/web/run_page.py), when a reader can open it: the service
        has a public URL and signs people in with GitHub (the page shows a run only to someone
        signed in; without the login it could only answer 401, and its sign-in link 503)."""
        public = self.text("BOT_PUBLIC_URL")
        return f"{public.rstrip('/')}/runs/{run_id}" if public and self.oauth_login else None

    def clone_url(self, full_name: str) -> str:
        return f"{self.git_base_url}/{full_name}.git"

    def agent_bin(self, agent: str, default_name: str) -> str:
        """The CLI's path: BOT_<AGENT>_BIN, else the project-local install, else the bare name."""
        override = self.text(f"BOT_{agent.upper()}_BIN")
        if override:
            return override
        local = self.agents_dir / "node_modules" / ".bin" / default_name
        return str(local) if local.exists() else default_name

    def agent_model(self, agent: str) -> str | None:
        return self.text(f"BOT_{agent.upper()}_MODEL")

    def agent_base_url(self, agent: str) -> str | None:
        return self.text(f"BOT_{agent.upper()}_BASE_URL")

    def provider_credential(self, name: str) -> str | None:
        """A provider key or token from the operator's environment (ANTHROPIC_API_KEY, …, or the
        variable BOT_OPENCODE_KEY_ENV names): the last scope of credential resolution
        (bot/credentials/resolve.py). Its value is a secret: never logged, never in argv."""
        found = self.environ.get(name)
        return found if found not in (None, "") else None

    def operator_for(self, agent: str) -> Operator:
        """What the operator configured for `agent`, for its adapter (adapters never read the
        environment): the CLI's path, model, gateway, and which credential variables are set."""
        adapter = base.get(agent)
        return Operator(binary=self.agent_bin(agent, adapter.executable), model=self.agent_model(agent),
                        base_url=self.agent_base_url(agent),
                        credentials_set=tuple(n for n in adapter.credential_env if self.provider_credential(n)),
                        provider=self._agent_option(agent, "PROVIDER"), key_env=self._agent_option(agent, "KEY_ENV"))

    def _agent_option(self, agent: str, option: str) -> str | None:
        """BOT_<AGENT>_<OPTION>, for an agent the table has such a variable for (OpenCode's provider)."""
        name = f"BOT_{agent.upper()}_{option}"
        try:
            variable(name)
        except KeyError:
            return None
        return self.text(name)

    @property
    def sandbox_host(self) -> Host:
        """The operator's settings for this machine's sandbox: cgroup layout and the CLIs' folder."""
        return Host(cgroup_root=self.path("BOT_CGROUP_ROOT"), cgroup_parent=self.text("BOT_CGROUP_PARENT"),
                    tool_dirs=(self.agents_dir,))

    @property
    def identity_source(self) -> str | None:
        """Where the App's identity comes from: "environment" (whole or in part), "stored", or None."""
        if app_in_environment(self.environ):
            return "environment"
        return "stored" if self._stored_text("GITHUB_APP_ID") else None

    @property
    def oauth_login(self) -> bool:
        """Whether the settings page can sign people in with GitHub (the App's OAuth client)."""
        return bool(self.text("GITHUB_CLIENT_ID") and self.text("GITHUB_CLIENT_SECRET"))

    def webhook_secret(self) -> str:
        check_identity(self.environ)
        return self.required("GITHUB_WEBHOOK_SECRET", "Set it to the webhook secret of your GitHub App.")

    def app_id(self) -> str:
        check_identity(self.environ)
        return self.required("GITHUB_APP_ID", "Set it to your GitHub App's numeric id (App settings → About).")

    def private_key(self) -> str:
        check_identity(self.environ)
        inline = self.text("GITHUB_PRIVATE_KEY")
        if inline:
            return inline.replace("\\n", "\n")
        path = self.text("GITHUB_PRIVATE_KEY_PATH")
        if path:
            return Path(path).read_text()
        raise MissingConfig(
            "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is not set. Generate a private key in your "
            "GitHub App's settings and point GITHUB_PRIVATE_KEY_PATH at the .pem file.")

    def missing_app_config(self) -> list[str]:
        """What a service needs before it can act on webhooks, as human sentences."""
        try:
            check_identity(self.environ)
        except PartialIdentity as exc:
            return [str(exc)]
        problems = []
        for check in (self.webhook_secret, self.app_id, self.private_key):
            try:
                check()
            except (MissingConfig, OSError) as exc:
                problems.append(str(exc))
        return problems
