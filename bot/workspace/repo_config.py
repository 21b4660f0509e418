"""Per-repository rules from `.github/bot.yml`, read from the DEFAULT BRANCH only.

A pull request must not be able to change the rules it runs under, so `load()` reads
the file from the mirror's default branch, never from a worktree. An invalid file is a
`ConfigError` naming the key and the line; it never falls back to the defaults.
The keys are documented in docs/repo-config.md.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import yaml

from bot import config
from bot.errors import BotError
from bot.permissions import PERMISSION_LEVELS, levels_from
from bot.workspace import paths
from bot.workspace.git import git_env

CONFIG_PATH = ".github/bot.yml"
MODES = ("strict", "native")
REGISTRY_HOSTS = {
    "pypi": ("pypi.org", "files.pythonhosted.org"),
    "npm": ("registry.npmjs.org",),
    "crates": ("crates.io", "index.crates.io", "static.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org"),
    "rubygems": ("rubygems.org", "index.rubygems.org"),
    "maven": ("repo.maven.apache.org", "repo1.maven.org"),
}
_HOST = re.compile(r"^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|B)?\s*$", re.IGNORECASE)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$", re.IGNORECASE)


class ConfigError(BotError, ValueError):
    """`.github/bot.yml` is invalid; `str(err)` is fit for a comment (names the key and line)."""

    def __init__(self, message: str, key: str | None = None, line: int | None = None,
                 source: str = CONFIG_PATH):
        self.key, self.line, self.source, self.reason = key, line, source, message
        where = source + (f" line {line}" if line else "") + (f", key `{key}`" if key else "")
        super().__init__(f"{where}: {message}")

    def comment(self) -> str:
        """A Markdown reply explaining what is wrong and that nothing ran."""
        return (f"I did not run: the repository configuration is invalid.\n\n"
                f"**{self}**\n\nFix `{CONFIG_PATH}` on the default branch and ask again.")


@dataclass(frozen=True)
class RepoLimits:
    memory_bytes: int = 2 << 30
    timeout_s: float = 600.0
    pids: int = 512
    # None: the operator's cap (BOT_LIMIT_*); a value here can only lower it (bot/job/episode.py)
    connections: int | None = None
    worktree_bytes: int | None = None
    home_bytes: int | None = None
    tmp_bytes: int | None = None


@dataclass(frozen=True)
class RepoConfig:
    default_agent: str | None = None  # None: the operator's BOT_DEFAULT_AGENT
    allowed_agents: tuple[str, ...] = config.AGENTS
    trigger_permissions: tuple[str, ...] = ("write", "maintain", "admin")
    mode: str = "strict"  # strict | native
    protected_paths: tuple[str, ...] = (".github/workflows/**",)
    limits: RepoLimits = field(default_factory=RepoLimits)
    egress_hosts: tuple[str, ...] = ()  # extra hosts the agent CLI may reach
    package_registries: tuple[str, ...] = ()  # names from REGISTRY_HOSTS, for the `run` tool
    open_pull_requests: bool = False  # on a PR: open a PR against its head instead of pushing
    allow_fork_push: bool = False  # push to a fork's head when its author allowed maintainers
    close_issue: bool = True  # PRs from an issue say "Fixes #N" (else "Refs #N")
    web_access: bool = False  # the CLI's web search and fetch tools (provider-run search: unseen by the proxy)
    # model budgets by cap name (BUDGET_KEYS): each can only lower the operator's (bot/relay/budgets.py)
    budgets: dict[str, float] = field(default_factory=dict)
    source: str = "defaults"  # "defaults" or ".github/bot.yml@<sha>"

    def agent(self) -> str:
        return self.default_agent or config.default_agent()

    def allows_agent(self, name: str) -> bool:
        return name in self.allowed_agents

    def may_trigger(self, permission: str | None) -> bool:
        return permission in self.trigger_permissions

    def protected(self, path: str) -> str | None:
        """The protected-path pattern `path` matches in any spelling, or None (bot/workspace/paths.py)."""
        return paths.protected_by(path, self.protected_paths)

    def registry_hosts(self) -> tuple[str, ...]:
        return tuple(h for name in self.package_registries for h in REGISTRY_HOSTS[name])


def parse(text: str, source: str = CONFIG_PATH) -> RepoConfig:
    """Validate the YAML text of `.github/bot.yml` into a RepoConfig, or raise ConfigError."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ConfigError(f"not valid YAML ({getattr(exc, 'problem', None) or exc})",
                          line=mark.line + 1 if mark else None, source=source) from None
    if data is None:
        return RepoConfig(source=source)
    lines = _key_lines(root)
    if not isinstance(data, dict):
        raise ConfigError("the file must be a mapping of keys to values", line=1, source=source)
    return _build(data, lines, source)


def load(mirror: Path, default_branch: str | None = None) -> RepoConfig:
    """The configuration on the mirror's default branch (HEAD when not named); defaults if absent."""
    ref = f"refs/heads/{default_branch}" if default_branch else "HEAD"
    sha = _git(mirror, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    if not sha:
        return RepoConfig()
    text = _git(mirror, "show", f"{sha}:{CONFIG_PATH}")
    if text is None:
        return RepoConfig(source=f"defaults@{sha[:7]}")
    return parse(text, source=f"{CONFIG_PATH}@{sha[:7]}")


def _git(mirror: Path, *args: str) -> str | None:
    """Read-only git over the mirror (or, for `bot run`, the user's checkout, which an earlier
    agent could have written): the bot's hardened environment, so no config the repository
    carries can start a program (bot/workspace/git.py)."""
    done = subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, text=True, env=git_env(),
                          stdin=subprocess.DEVNULL)
    return done.stdout.strip() if done.returncode == 0 else None


def _key_lines(root) -> dict[str, int]:
    """1-based line of every top-level key and every `limits.<key>`."""
    lines: dict[str, int] = {}
    if not isinstance(root, yaml.MappingNode):
        return lines
    for key, value in root.value:
        lines[str(key.value)] = key.start_mark.line + 1
        if isinstance(value, yaml.MappingNode):
            for sub, _ in value.value:
                lines[f"{key.value}.{sub.value}"] = sub.start_mark.line + 1
    return lines


def _build(data: dict, lines: dict[str, int], source: str) -> RepoConfig:
    known = {f.name for f in fields(RepoConfig)} - {"source"}
    values: dict = {}
    for key, value in data.items():
        key = str(key)
        fail = _failer(key, lines.get(key), source)
        if key not in known:
            fail(f"unknown key (known keys: {', '.join(sorted(known))})")
        values[key] = _VALIDATORS[key](value, fail, lines, source)
    result = replace(RepoConfig(), source=source, **values)
    if result.default_agent and result.default_agent not in result.allowed_agents:
        _failer("default_agent", lines.get("default_agent"), source)(
            f"`{result.default_agent}` is not in allowed_agents")
    return result


def _failer(key: str, line: int | None, source: str):
    def fail(message: str):
        raise ConfigError(message, key=key, line=line, source=source)
    return fail


def _agent(value, fail, *_):
    if value not in config.AGENTS:
        fail(f"`{value}` is not an agent (one of: {', '.join(config.AGENTS)})")
    return value


def _agents(value, fail, *_):
    items = _string_list(value, fail)
    for item in items:
        _agent(item, fail)
    if not items:
        fail("must name at least one agent")
    return items


def _permissions(value, fail, *_):
    """`write` means write and above; a list names the exact levels."""
    if isinstance(value, str):
        if value not in PERMISSION_LEVELS:
            fail(f"`{value}` is not a permission level (one of: {', '.join(PERMISSION_LEVELS)})")
        return levels_from(value)
    items = _string_list(value, fail)
    for item in items:
        if item not in PERMISSION_LEVELS:
            fail(f"`{item}` is not a permission level (one of: {', '.join(PERMISSION_LEVELS)})")
    return items


def _mode(value, fail, *_):
    if value not in MODES:
        fail(f"`{value}` is not a mode (strict or native)")
    return value


def _paths(value, fail, *_):
    items = _string_list(value, fail)
    if any(not item.strip() for item in items):
        fail("an empty pattern is not allowed")
    return items


def _hosts(value, fail, *_):
    items = _string_list(value, fail)
    for item in items:
        if not _HOST.match(item) or "*" in item:
            fail(f"`{item}` is not a host name (use `.example.com` for subdomains)")
    return items


def _registries(value, fail, *_):
    items = _string_list(value, fail)
    for item in items:
        if item not in REGISTRY_HOSTS:
            fail(f"`{item}` is not a known registry (one of: {', '.join(REGISTRY_HOSTS)})")
    return items


def _boolean(value, fail, *_):
    if not isinstance(value, bool):
        fail(f"must be true or false, not `{value}`")
    return value


_LIMIT_KEYS = "memory, timeout, pids, connections, worktree, home, tmp"
_SIZE_LIMITS = {"memory": "memory_bytes", "worktree": "worktree_bytes", "home": "home_bytes",
                "tmp": "tmp_bytes"}


def _limits(value, fail, lines, source):
    if not isinstance(value, dict):
        fail(f"must be a mapping with any of {_LIMIT_KEYS}")
    result = RepoLimits()
    for key, item in value.items():
        sub = _failer(f"limits.{key}", lines.get(f"limits.{key}"), source)
        if key in _SIZE_LIMITS:
            result = replace(result, **{_SIZE_LIMITS[key]: _size(item, sub)})
        elif key == "timeout":
            result = replace(result, timeout_s=_duration(item, sub))
        elif key == "pids":
            result = replace(result, pids=_whole(item, 16, 65536, sub))
        elif key == "connections":
            result = replace(result, connections=_whole(item, 4, 4096, sub))
        else:
            sub(f"unknown limit (known: {_LIMIT_KEYS})")
    return result


def _whole(value, low: int, high: int, fail) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        fail(f"must be a whole number from {low} to {high}, not `{value}`")
    return value


def size_bytes(text: str) -> int:
    """'512MiB', '2GiB', '1048576' as bytes (an operator's BOT_LIMIT_* value); ValueError if not."""
    def fail(message: str):
        raise ValueError(message)
    return _size(text, fail)


def _size(value, fail) -> int:
    match = _SIZE.match(str(value)) if not isinstance(value, bool) else None
    if not match:
        fail(f"`{value}` is not a size (e.g. 2GiB, 512MiB)")
    unit = (match.group(2) or "B").upper().rstrip("B").rstrip("I")
    size = int(float(match.group(1)) * 1024 ** " KMGT".index(unit or " "))
    if not 64 << 20 <= size <= 64 << 30:
        fail(f"`{value}` is outside 64MiB..64GiB")
    return size


def _duration(value, fail) -> float:
    match = _DURATION.match(str(value)) if not isinstance(value, bool) else None
    if not match:
        fail(f"`{value}` is not a duration (e.g. 300s, 10m)")
    seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[(match.group(2) or "s").lower()]
    if not 10 <= seconds <= 6 * 3600:
        fail(f"`{value}` is outside 10s..6h")
    return seconds


def _string_list(value, fail) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        fail("must be a list of strings")
    return tuple(value)


# the operator's BOT_BUDGET_<CAP> variables, as `budgets.<cap>` keys: cap -> its parser (int or float)
BUDGET_KEYS = {v.name.removeprefix("BOT_BUDGET_").lower(): v.parse
               for v in config.VARIABLES if v.name.startswith("BOT_BUDGET_")}


def _budgets(value, fail, lines, source):
    if not isinstance(value, dict):
        fail(f"must be a mapping with any of {', '.join(BUDGET_KEYS)}")
    result = {}
    for key, item in value.items():
        sub = _failer(f"budgets.{key}", lines.get(f"budgets.{key}"), source)
        if key not in BUDGET_KEYS:
            sub(f"unknown budget (known: {', '.join(BUDGET_KEYS)})")
        result[key] = _amount(item, BUDGET_KEYS[key] is int, sub)
    return result


def _amount(value, whole: bool, fail) -> float:
    numeric = isinstance(value, int | float) and not isinstance(value, bool)
    if not numeric or not value >= 0 or (whole and not isinstance(value, int)):
        fail(f"must be a {'whole number' if whole else 'number'} at least 0, not `{value}`")
    return value if whole else float(value)


_VALIDATORS = {
    "default_agent": _agent, "allowed_agents": _agents, "trigger_permissions": _permissions,
    "mode": _mode, "protected_paths": _paths, "limits": _limits, "egress_hosts": _hosts,
    "package_registries": _registries, "open_pull_requests": _boolean,
    "allow_fork_push": _boolean, "close_issue": _boolean, "web_access": _boolean,
    "budgets": _budgets,
}
