"""The configuration table: every environment variable the bot reads, with its one default, its
meaning and its kind. `docs/configuration.md` documents the same table; a test keeps them equal.
`check_all` and `check_identity` are the refusals every entry point gives before it builds its
settings (bot/config/__init__.py: `Settings.load`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters import base
from bot.config.kinds import (
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

PROJECT_ROOT = Path(__file__).resolve().parents[2]
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
             "The service's public URL (settings page links, OAuth callback, the run page linked from each run "
             "once GitHub sign-in is configured too).",
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
    Variable("BOT_GC_INTERVAL", "3600", "Seconds between two retention sweeps of `bot serve` and of each "
             "`bot worker`, each of its own data dir (0: none).", Number()),
    Variable("BOT_SCHEDULE_INTERVAL", "60", "Seconds between two evaluations of the automations' schedules by "
             "each worker pool (`bot serve` with workers, `bot worker`; 0: none).", Number()),
    Variable("BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR", "20", "Automation runs one account may cause in an hour, "
             "across every repository (an outsider opening issues cannot run up cost; 0: no cap).", Number()),
    Variable("BOT_RETENTION_CLOSED_DAYS", "2", "Days after its issue or pull request was closed that a thread's CLI "
             "homes are removed (the next turn, if any, starts fresh).", Number("a number of days")),
    # agents
    Variable("BOT_AGENTS_DIR", str(PROJECT_ROOT / "agents-cli"), "Where `make agents` installed the CLIs.",
             ExistingPath(folder=True, example="/opt/bot/agents-cli")),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_BIN", None, "An agent CLI's path (else the pinned install).", Kind()),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_MODEL", None, "An agent's model (else the CLI's default).", Kind()),
    Variable(f"BOT_{AGENT_PLACEHOLDER}_BASE_URL", None, "An operator gateway for an agent's provider. The relay "
             "hands it the agent's key (`OPENAI_API_KEY`, …) as its credential: one must be set, a placeholder "
             "when the gateway asks for none.",
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
    Variable("BOT_CGROUP_ROOT", "/sys/fs/cgroup", "Where the cgroups for the sandbox's memory and process caps "
             "are mounted: cgroup v2 (`cgroup.controllers` here or in `unified/`), else v1's `memory/` and `pids/`; "
             "in a container, where the delegated subtrees are mounted (docs/deploy.md).",
             ExistingPath(folder=True, example="/sys/fs/cgroup")),
    Variable("BOT_CGROUP_PARENT", None, "On a host: a cgroup delegated to the bot's user (systemd `Delegate=yes`), "
             "as a path inside each hierarchy under BOT_CGROUP_ROOT, to create episode cgroups under "
             "(default: the bot's own cgroup).", Kind()),
    Variable("BOT_LIMIT_CONNECTIONS", "64", "Connections one episode may hold open at once to its egress proxy "
             "(and as many to its bridge relay).", Whole(1)),
    Variable("BOT_LIMIT_WORKTREE", "1GiB", "How much an episode may grow its worktree.", Size()),
    Variable("BOT_LIMIT_HOME", "512MiB", "How much an agent CLI's home may hold.", Size()),
    Variable("BOT_LIMIT_TMP", "512MiB", "Size of the sandbox's `/tmp` and `/dev/shm` tmpfs.", Size()),
    Variable("BOT_DISK_WATCH_INTERVAL", "2", "Seconds between two looks at an episode's worktree and home sizes "
             "(longer when a look is slow).", Number(positive=True)),
    # the model relay
    Variable("BOT_RELAY_PRICES", None,
             "A model price table (JSON, the shape of bot/relay/prices.json) merged over the built-in one; "
             "the model relay refuses a model neither lists.",
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


def variable(name: str) -> Variable:
    """The table's entry for `name` (an agent's `BOT_CLAUDE_MODEL` is `BOT_<AGENT>_MODEL`)."""
    known = _BY_NAME.get(name)
    if known is None:
        for agent in base.names():
            generic = name.replace(f"_{agent.upper()}_", f"_{AGENT_PLACEHOLDER}_", 1)
            if generic != name and generic in _BY_NAME:
                return _BY_NAME[generic]
        raise KeyError(f"{name} is not a configuration variable (add it to bot.config.table.VARIABLES)")
    return known


# The App's identity: one unit, from the environment or from the stored App, never mixed.
APP_VARIABLES = ("GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET",
                 "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET")


class PartialIdentity(MissingConfig):
    """The environment sets some of the App's variables and not the others."""


def app_in_environment(environ: Mapping[str, str]) -> list[str]:
    """The App's variables the operator set in `environ`."""
    return [name for name in APP_VARIABLES if environ.get(name) not in (None, "")]


def check_identity(environ: Mapping[str, str]) -> None:
    """Refuse an App the environment sets in part: naming what is missing, never "not configured"."""
    given = set(app_in_environment(environ))
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
