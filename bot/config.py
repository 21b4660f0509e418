"""Configuration: every environment variable the bot reads, with its one default, in one table.

Values are read when asked for, never at import, so a test or a subcommand can set the
environment first. `docs/configuration.md` documents the same table; a test keeps them equal.
Only this module reads the bot's configuration from the environment.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters import base
from adapters.base import Operator
from bot.config_kinds import (
    Choice,
    ExistingPath,
    Flag,
    Folder,
    HostName,
    HostPort,
    Kind,
    Number,
    Pattern,
    Size,
    Url,
    Whole,
)
from bot.errors import BotError
from sandbox.base import Host

PROJECT_ROOT = Path(__file__).resolve().parent.parent
AGENT_PLACEHOLDER = "<AGENT>"


class MissingConfig(BotError, RuntimeError):
    """A required variable is not set; the message names it and how to set it."""


@dataclass(frozen=True)
class Variable:
    """One variable: its one default, what it means, and its kind (what its text must be), checked
    at every command's start by `check_all`. A secret's value is never shown in a refusal."""

    name: str
    default: str | None
    meaning: str
    kind: Kind
    secret: bool = False

    def parse(self, text: str) -> Any:
        return self.kind.parse(text)


VARIABLES: tuple[Variable, ...] = (
    # the service
    Variable("BOT_DATA_DIR", "./.bot-data", "Database, mirrors, worktrees and CLI homes (`bot run` and `bot runs` "
             "without it: the per-user data dir, bot/cli/preflight.py).", Folder()),
    Variable("BOT_HANDLE", "bot", "The mention the bot answers to (`@bot`).",
             Pattern(r"@?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?", "a GitHub login (letters, digits, -)", "bot")),
    Variable("BOT_HOST", "127.0.0.1", "Address `bot serve` listens on.", HostName()),
    Variable("BOT_PORT", "8000", "Port `bot serve` listens on.", Whole(1, 65535, "a port number", "8000")),
    Variable("BOT_PUBLIC_URL", None,
             "The service's public URL (settings page links, OAuth callback, the run page linked from each run).",
             Url()),
    Variable("BOT_WORKERS", "2", "Episodes run at once by one process.", Whole(0)),
    Variable("BOT_LEASE_SECONDS", "30", "A claimed job's lease; renewed while it runs.", Number(positive=True)),
    Variable("BOT_WEBHOOK_CONCURRENCY", "64", "Webhook bodies read (and their signatures checked) at once; a "
             "delivery beyond it is answered 503 with Retry-After before any byte of its body is read.",
             Whole(1)),
    Variable("BOT_WEBHOOK_BODY_TIMEOUT", "10", "Seconds a webhook body may take to arrive in full; a slower one "
             "is answered 408.", Number(positive=True)),
    Variable("BOT_SHUTDOWN_GRACE", "20", "Seconds running jobs get to stop on SIGTERM.", Number()),
    Variable("BOT_PROGRESS_INTERVAL", "3", "Seconds between edits of the tracking comment.", Number()),
    Variable("BOT_LOG_LEVEL", "INFO", "Python logging level.",
             Choice(("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "a log level")),
    Variable("BOT_POST_SETTLE_SECONDS", "15", "A job retried after its worker died waits this long before it "
             "writes to the thread, so the earlier attempt's writes still in flight land first "
             "(docs/operations.md).", Number()),
    Variable("BOT_OUTSIDER_REPLY_WINDOW", "3600", "Seconds in which a thread answers people without permission "
             "to run the bot (help, status, the agent list) at most once; the not-allowed notice is once per "
             "thread (docs/threat-model.md).", Number()),
    Variable("BOT_LOG_FORMAT", "text", "`text` lines, or `json`: one JSON object a line, with the job, thread and run "
             "on every line of a job.", Choice(("text", "json"), "a log format", fold=True)),
    Variable("BOT_METRICS_ADDR", "", "`host:port` of a separate listener serving Prometheus `/metrics` "
             "(empty: none; docs/operations.md).", HostPort()),
    Variable("BOT_METRICS_TOKEN", None, "When set, `/metrics` is also served on the main port to a bearer of "
             "this token (docs/operations.md).", Kind(), secret=True),
    Variable("BOT_DEFAULT_AGENT", "claude", "Agent used when the comment names none.",
             Choice(tuple(base.names()), "an agent")),
    Variable("BOT_SECRET_KEY", None, "Key that encrypts stored credentials (else a key file in the data dir).",
             Kind(), secret=True),
    Variable("BOT_DATABASE_URL", None,
             "`postgresql://…` to share one database between machines (else SQLite in the data dir).",
             Url(("postgresql", "postgres", "sqlite"), "postgresql://bot@db.example.com/bot"), secret=True),
    Variable("BOT_SESSION_MAX_BYTES", str(64 << 20),
             "Largest packed CLI home that follows a thread between machines.", Whole(0)),
    # GitHub
    Variable("GITHUB_APP_ID", None, "The GitHub App's id.",
             Whole(1, what="a GitHub App id", example="123456",
                   span="a whole number: App settings → About")),
    Variable("GITHUB_PRIVATE_KEY", None, "The App's private key (PEM text, `\\n` allowed).",
             Kind(), secret=True),
    Variable("GITHUB_PRIVATE_KEY_PATH", None, "The App's private key file.",
             ExistingPath(example="/path/to/app.private-key.pem")),
    Variable("GITHUB_WEBHOOK_SECRET", None, "The App's webhook secret.", Kind(), secret=True),
    Variable("GITHUB_CLIENT_ID", None, "The App's OAuth client id (settings page login).", Kind()),
    Variable("GITHUB_CLIENT_SECRET", None, "The App's OAuth client secret (settings page login).",
             Kind(), secret=True),
    Variable("GITHUB_API_URL", "https://api.github.com", "GitHub's REST API (GHES: `https://HOST/api/v3`).",
             Url()),
    Variable("BOT_GIT_BASE_URL", None, "Where repositories are cloned from (unset: GitHub's web host).",
             Url(("https", "http", "file"))),
    Variable("BOT_GITHUB_OAUTH_URL", None, "Where the settings page's login goes (unset: GitHub's web host).",
             Url()),
    Variable("BOT_GIT_NAME", None, "Author name of the bot's commits (default `<handle>[bot]`).", Kind()),
    Variable("BOT_GIT_EMAIL", None, "Author email of the bot's commits (default the handle's noreply address).",
             Kind()),
    # workspace
    Variable("BOT_SPARE_WORKTREES", "2", "Worktrees kept checked out ahead of need.", Whole(0)),
    Variable("BOT_MIRRORS_MAX_BYTES", str(20 << 30), "Mirrors beyond this size are evicted, oldest first.",
             Whole(0)),
    Variable("BOT_RETENTION_EVENTS_DAYS", "30", "Days a finished run's events and scratch folder are kept.",
             Number("a number of days")),
    Variable("BOT_RETENTION_HOME_DAYS", "14", "Days a thread may stay idle before its CLI homes are removed "
             "(its next turn starts a fresh session).", Number("a number of days")),
    Variable("BOT_DISK_BUDGET", str(50 << 30), "Bytes the data dir may hold; spare worktrees, then mirrors, "
             "go least recently used first past it.", Whole(0)),
    Variable("BOT_GC_INTERVAL", "3600", "Seconds between two retention sweeps of `bot serve` (0: none).",
             Number()),
    Variable("BOT_RETENTION_CLOSED_DAYS", "2", "Days after its issue or pull request was closed that a thread's CLI "
             "homes are removed (the next turn, if any, starts fresh).", Number("a number of days")),
    # agents
    Variable("BOT_AGENTS_DIR", str(PROJECT_ROOT / "agents-cli"), "Where `make agents` installed the CLIs.",
             ExistingPath(folder=True, example="/opt/bot/agents-cli")),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_BIN", None, "An agent CLI's path (else the pinned install).", Kind()),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_MODEL", None, "An agent's model (else the CLI's default).", Kind()),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_BASE_URL", None, "An operator gateway for an agent's provider.",
             Url(example="https://gateway.example.com")),
    Variable("BOT_OPENCODE_PROVIDER", None, "OpenCode's provider (else the model's prefix).", Kind()),
    Variable("BOT_OPENCODE_KEY_ENV", None, "The variable holding a custom OpenCode provider's key.",
             Pattern(r"[A-Za-z_][A-Za-z0-9_]*", "a variable name", "MY_PROVIDER_API_KEY")),
    Variable("BOT_CODEX_AUTH_FILE", None, "A Codex ChatGPT login (`auth.json`) to use.",
             ExistingPath(example="/path/to/auth.json")),
    Variable("CODEX_HOME", None, "Codex's own home, searched for `auth.json`.", Kind()),
    Variable("BOT_CHATGPT_TOKEN_URL", "https://auth.openai.com/oauth/token",
             "Where the model relay refreshes a Codex ChatGPT login's tokens.", Url()),
    # sandbox
    Variable("BOT_SANDBOX_TIER", "1", "Minimum sandbox tier: 1 (bubblewrap) or 0 (process jail, tests).",
             Choice(("1", "0"), "a sandbox tier", "1: bubblewrap, 0: process jail, for tests", as_int=True)),
    Variable("BOT_CGROUP_ROOT", "/sys/fs/cgroup", "The cgroup v2 mount.",
             ExistingPath(folder=True, example="/sys/fs/cgroup")),
    Variable("BOT_CGROUP_PARENT", None, "A delegated cgroup to create episode cgroups under.", Kind()),
    Variable("BOT_LIMIT_CONNECTIONS", "64", "Connections one episode may hold open at once to its egress proxy "
             "(and as many to its bridge relay).", Whole(1)),
    Variable("BOT_LIMIT_WORKTREE", "1GiB", "How much an episode may grow its worktree.", Size()),
    Variable("BOT_LIMIT_HOME", "512MiB", "How much an agent CLI's home may hold.", Size()),
    Variable("BOT_LIMIT_TMP", "512MiB", "Size of the sandbox's `/tmp` and `/dev/shm` tmpfs.", Size()),
    Variable("BOT_DISK_WATCH_INTERVAL", "2", "Seconds between two looks at an episode's worktree and home sizes "
             "(longer when a look is slow).", Number(positive=True)),
    # the model relay
    Variable("BOT_RELAY_PRICES", None,
             "A model price table (JSON, the shape of bot/relay/prices.json) merged over the built-in one.",
             ExistingPath(example="/path/to/prices.json")),
    Variable("BOT_RELAY_RETRIES", "4", "Times the model relay retries a busy provider (429, 529, 5xx).",
             Whole(0)),
    Variable("BOT_RELAY_RETRY_MAX_WAIT", "60", "Longest wait in seconds before one retry of a busy provider.",
             Number()),
    Variable("BOT_OPENAI_ORGANIZATION", None, "The `OpenAI-Organization` the model relay sends with OpenAI calls "
             "(a client's own is dropped).", Kind()),
    Variable("BOT_OPENAI_PROJECT", None, "The `OpenAI-Project` the model relay sends with OpenAI calls "
             "(a client's own is dropped).", Kind()),
    Variable("BOT_BUDGET_TURN_TOKENS", None, "Model tokens one turn may spend.", Whole(0)),
    Variable("BOT_BUDGET_TURN_USD", None, "Model cost (USD, list price) one turn may spend.",
             Number("an amount of USD")),
    Variable("BOT_BUDGET_THREAD_TOKENS", None, "Model tokens one thread may spend over all its turns.",
             Whole(0)),
    Variable("BOT_BUDGET_THREAD_USD", None, "Model cost (USD) one thread may spend over all its turns.",
             Number("an amount of USD")),
    Variable("BOT_BUDGET_REQUESTER_DAY_TOKENS", None, "Model tokens one requester may spend per UTC day.",
             Whole(0)),
    Variable("BOT_BUDGET_REQUESTER_DAY_USD", None, "Model cost (USD) one requester may spend per UTC day.",
             Number("an amount of USD")),
    Variable("BOT_BUDGET_INSTALLATION_MONTH_TOKENS", None,
             "Model tokens one installation may spend per UTC month.", Whole(0)),
    Variable("BOT_BUDGET_INSTALLATION_MONTH_USD", None,
             "Model cost (USD) one installation may spend per UTC month.", Number("an amount of USD")),
    # the Action (set by the runner, or by action.yml)
    Variable("BOT_GITHUB_TOKEN", None, "The Action's `github-token` input.", Kind(), secret=True),
    Variable("GITHUB_TOKEN", None, "The workflow's token (Action).", Kind(), secret=True),
    Variable("GITHUB_ACTIONS", None, "Set by the runner (`true` in an Action).", Flag()),
    Variable("GITHUB_EVENT_NAME", None, "Set by the runner (Action).", Kind()),
    Variable("GITHUB_EVENT_PATH", None, "Set by the runner (Action).", Kind()),
    Variable("GITHUB_OUTPUT", None, "Set by the runner (Action).", Kind()),
    Variable("GITHUB_STEP_SUMMARY", None, "Set by the runner (Action).", Kind()),
    Variable("GITHUB_SERVER_URL", "https://github.com",
             "GitHub's web host (set by the runner in an Action; unset with a GHES `GITHUB_API_URL`: its host).",
             Url(("https", "http", "file"))),
    Variable("RUNNER_TEMP", None, "Set by the runner (Action); the data dir goes under it.", Kind()),
    Variable("BOT_SESSION_CACHE_DIR", None, "The Action's per-thread session cache folder (set by action.yml).",
             Kind()),
)
_BY_NAME = {variable.name: variable for variable in VARIABLES}


def check_all(environ: Mapping[str, str]) -> list[str]:
    """One line per variable whose text in `environ` is not of its kind (empty counts as unset):
    the variable, what is wrong with its value, and an example of a good one."""
    lines = []
    for variable in VARIABLES:
        for name in _concrete_names(variable.name):
            text = environ.get(name)
            if text in (None, "") or (problem := variable.kind.problem(text)) is None:
                continue
            shown = "(hidden)" if variable.secret else repr(text)
            lines.append(f"{name}={shown}: {problem}, e.g. {name}={_example(variable)}")
    return lines


def _concrete_names(name: str) -> list[str]:
    if AGENT_PLACEHOLDER not in name:
        return [name]
    return [name.replace(AGENT_PLACEHOLDER, agent.upper()) for agent in base.names()]


def _example(variable: Variable) -> str:
    """Its default when that is a good value to show, else the kind's example."""
    default = variable.default
    fine = default not in (None, "") and variable.kind.problem(default) is None and not variable.secret
    return default if fine and default is not None else variable.kind.example


def _variable(name: str) -> Variable:
    known = _BY_NAME.get(name)
    if known is None:
        for agent in base.names():
            generic = name.replace(f"_{agent.upper()}_", f"_{AGENT_PLACEHOLDER}_", 1)
            if generic != name and generic in _BY_NAME:
                return _BY_NAME[generic]
        raise KeyError(f"{name} is not a configuration variable (add it to bot.config.VARIABLES)")
    return known


# Set by `bot serve` (bot.settings.manifest.install): the GitHub App the manifest flow stored. It is
# consulted only while the environment names no part of an App: an App comes whole from one source.
stored_setting: Callable[[str], str | None] | None = None

# The App's identity: one unit, from the environment or from the stored App, never mixed.
APP_VARIABLES = ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET",
                 "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET")


class PartialIdentity(MissingConfig):
    """The environment sets some of the App's variables and not the others."""


def env(name: str, default: str | None = None) -> str | None:
    """The variable's text, else its one default (None when it has none). Empty counts as unset."""
    if default is None and name in _BY_NAME:  # transitional: callers still passing a default
        default = _BY_NAME[name].default
    text = os.environ.get(name)
    if text in (None, "") and stored_setting is not None and not app_in_environment():
        text = stored_setting(name)
    return text if text not in (None, "") else default


def app_in_environment() -> list[str]:
    """The App's variables the operator set in the environment."""
    return [name for name in APP_VARIABLES if os.environ.get(name) not in (None, "")]


def identity_source() -> str | None:
    """Where the App's identity comes from: "environment" (whole or in part), "stored", or None."""
    if app_in_environment():
        return "environment"
    if stored_setting is not None and stored_setting("GITHUB_APP_ID"):
        return "stored"
    return None


def check_identity() -> None:
    """Refuse an App the environment sets in part: naming what is missing, never "not configured"."""
    given = set(app_in_environment())
    if not given:
        return
    wanted = [("GITHUB_APP_ID",), ("GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"), ("GITHUB_WEBHOOK_SECRET",)]
    if given & {"GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET"}:
        wanted += [("GITHUB_CLIENT_ID",), ("GITHUB_CLIENT_SECRET",)]
    missing = [" or ".join(names) for names in wanted if not given & set(names)]
    if missing:
        raise PartialIdentity(
            f"the GitHub App is set in the environment only in part ({', '.join(sorted(given))}); "
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not set. Set all of the "
            "App's variables, or none of them to use the App created from the start page.")


def is_set(name: str) -> bool:
    """Whether the operator set the variable (its default does not count)."""
    _variable(name)
    return os.environ.get(name) not in (None, "")


def value(name: str) -> Any:
    """The variable parsed to its type, else its default parsed the same way."""
    text = env(name)
    return None if text is None else _variable(name).parse(text)


def text(name: str) -> str:
    """A variable that always has a value (its own, else its default)."""
    value = env(name)
    if value is None:
        raise MissingConfig(f"{name} is not set and has no default.")
    return value


def require(name: str, hint: str = "") -> str:
    text = env(name)
    if text is None:
        raise MissingConfig(f"{name} is not set." + (f" {hint}" if hint else ""))
    return text


def data_dir() -> Path:
    path = value("BOT_DATA_DIR").resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def handle() -> str:
    return text("BOT_HANDLE").lstrip("@")


def github_api_url() -> str:
    return text("GITHUB_API_URL").rstrip("/")


def server_url() -> str:
    """GitHub's web host: GITHUB_SERVER_URL, else the host of an Enterprise Server API URL
    (`https://HOST/api/v3`), else github.com."""
    api = github_api_url()
    if not is_set("GITHUB_SERVER_URL") and api.endswith("/api/v3"):
        return api.removesuffix("/api/v3")
    return text("GITHUB_SERVER_URL").rstrip("/")


def git_base_url() -> str:
    return (env("BOT_GIT_BASE_URL") or server_url()).rstrip("/")


def oauth_url() -> str:
    """Where the settings sign-in and the App manifest form go."""
    return (env("BOT_GITHUB_OAUTH_URL") or server_url()).rstrip("/")


def run_url(run_id: str) -> str | None:
    """The live run page of a run (bot/web/run_page.py), when the service has a public URL."""
    base = env("BOT_PUBLIC_URL")
    return f"{base.rstrip('/')}/runs/{run_id}" if base else None


def clone_url(full_name: str) -> str:
    return f"{git_base_url()}/{full_name}.git"


def default_agent() -> str:
    return text("BOT_DEFAULT_AGENT")


def workers() -> int:
    return value("BOT_WORKERS")


def sandbox_tier() -> int:
    return value("BOT_SANDBOX_TIER")


def agents_dir() -> Path:
    """Where `make agents` installs the pinned CLIs (node_modules/.bin inside)."""
    return value("BOT_AGENTS_DIR")


def agent_bin(agent: str, default_name: str) -> str:
    """The CLI's path: BOT_<AGENT>_BIN, else the project-local install, else the bare name."""
    override = env(f"BOT_{agent.upper()}_BIN")
    if override:
        return override
    local = agents_dir() / "node_modules" / ".bin" / default_name
    return str(local) if local.exists() else default_name


def agent_base_url(agent: str) -> str | None:
    return env(f"BOT_{agent.upper()}_BASE_URL")


def agent_model(agent: str) -> str | None:
    return env(f"BOT_{agent.upper()}_MODEL")


def provider_credential(name: str) -> str | None:
    """A provider key or token from the operator's environment (ANTHROPIC_API_KEY, …, or the
    variable BOT_OPENCODE_KEY_ENV names): the last scope of credential resolution
    (bot/credentials/resolve.py). Its value is a secret: never logged, never in argv."""
    value = os.environ.get(name)
    return value if value not in (None, "") else None


def operator_for(agent: str) -> Operator:
    """What the operator configured for `agent`, for its adapter (adapters never read the
    environment): the CLI's path, model, gateway, and which credential variables are set."""
    adapter = base.get(agent)
    return Operator(binary=agent_bin(agent, adapter.executable), model=agent_model(agent),
                    base_url=agent_base_url(agent),
                    credentials_set=tuple(n for n in adapter.credential_env if provider_credential(n)),
                    provider=_agent_option(agent, "PROVIDER"), key_env=_agent_option(agent, "KEY_ENV"))


def _agent_option(agent: str, option: str) -> str | None:
    """BOT_<AGENT>_<OPTION>, for an agent the table has such a variable for (OpenCode's provider)."""
    name = f"BOT_{agent.upper()}_{option}"
    return env(name) if name in _BY_NAME else None


def sandbox_host() -> Host:
    """The operator's settings for this machine's sandbox: cgroup layout and the CLIs' folder."""
    return Host(cgroup_root=value("BOT_CGROUP_ROOT"), cgroup_parent=env("BOT_CGROUP_PARENT"),
                tool_dirs=(agents_dir(),))


def webhook_secret() -> str:
    check_identity()
    return require("GITHUB_WEBHOOK_SECRET", "Set it to the webhook secret of your GitHub App.")


def app_id() -> str:
    check_identity()
    return require("GITHUB_APP_ID", "Set it to your GitHub App's numeric id (App settings → About).")


def private_key() -> str:
    check_identity()
    inline = env("GITHUB_PRIVATE_KEY")
    if inline:
        return inline.replace("\\n", "\n")
    path = env("GITHUB_PRIVATE_KEY_PATH")
    if path:
        return Path(path).read_text()
    raise MissingConfig(
        "GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH is not set. "
        "Generate a private key in your GitHub App's settings and point GITHUB_PRIVATE_KEY_PATH at the .pem file.")


def missing_app_config() -> list[str]:
    """What a service needs before it can act on webhooks, as human sentences."""
    try:
        check_identity()
    except PartialIdentity as exc:
        return [str(exc)]
    problems = []
    for check in (webhook_secret, app_id, private_key):
        try:
            check()
        except (MissingConfig, OSError) as exc:
            problems.append(str(exc))
    return problems
