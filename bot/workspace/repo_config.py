"""Per-repository rules from `.github/bot.yml`, read from the DEFAULT BRANCH only.

A pull request must not be able to change the rules it runs under, so `load()` reads
the file from the mirror's default branch, never from a worktree. An invalid file is a
`ConfigError` naming the key and the line; it never falls back to the defaults.
The keys are documented in docs/repo-config.md; their schema, one pydantic model per
section, is bot/workspace/repo_config_model.py. RepoConfig stays a plain frozen dataclass:
the rest of the bot builds it directly (tests, `bot run` defaults) without YAML.
"""
from __future__ import annotations

import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core
import yaml

from adapters import base as adapters
from bot.errors import BotError
from bot.record import inert
from bot.workspace import paths
from bot.workspace.git import git_env
from bot.workspace.repo_config_model import (  # noqa: F401  (re-exported: the runtime names)
    BUDGET_KEYS,
    MODES,
    REGISTRY_HOSTS,
    Automation,
    BotYml,
    RepoLimits,
    ReviewsSection,
    Section,
    TriggersSection,
    size,
)
from sandbox.bounded import run_capped_sync

CONFIG_PATH = ".github/bot.yml"
CONFIG_MAX_BYTES = 256 << 10  # a bot.yml is a few hundred bytes: a larger one is refused, never read whole


class ConfigError(BotError, ValueError):
    """`.github/bot.yml` is invalid; `str(err)` is fit for a comment (names the key and line)."""

    def __init__(self, message: str, key: str | None = None, line: int | None = None,
                 source: str = CONFIG_PATH):
        self.key, self.line, self.source, self.reason = key, line, source, message
        where = source + (f" line {line}" if line else "") + (f", key {inert.code(key)}" if key else "")
        super().__init__(f"{where}: {message}")

    def comment(self) -> str:
        """A Markdown reply explaining what is wrong and that nothing ran."""
        return (f"I did not run: the repository configuration is invalid.\n\n"
                f"**{self}**\n\nFix `{CONFIG_PATH}` on the default branch and ask again.")


@dataclass(frozen=True)
class RepoConfig:
    default_agent: str | None = None  # None: the operator's BOT_DEFAULT_AGENT
    allowed_agents: tuple[str, ...] = tuple(adapters.names())
    fallback: tuple[str, ...] = ()  # agents to try when the chosen one's provider cannot serve (bot/job/fallback.py)
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
    triggers: TriggersSection = field(default_factory=TriggersSection)  # other ways to call the bot: off unless set
    reviews: ReviewsSection = field(default_factory=ReviewsSection)
    automations: tuple[Automation, ...] = ()  # bot/automations: agents run on events and schedules
    source: str = "defaults"  # "defaults" or ".github/bot.yml@<sha>"

    def agent(self, operator_default: str) -> str:
        """The repository's default agent, else the operator's (BOT_DEFAULT_AGENT)."""
        return self.default_agent or operator_default

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


def at_commit(commit: str | None, kind: str | None, size: int, text: bytes | None) -> RepoConfig:
    """The configuration `load` gives, from what the mirror holds at the default branch's `commit`
    (None: no such branch): the object at CONFIG_PATH (`kind` None: none there) and its bytes,
    read only when at most CONFIG_MAX_BYTES (bot/workspace/mirror_read.py)."""
    if commit is None:
        return RepoConfig()
    if kind is None:
        return RepoConfig(source=f"defaults@{commit[:7]}")
    if size > CONFIG_MAX_BYTES or text is None:
        raise ConfigError(f"the file is larger than {CONFIG_MAX_BYTES:,} bytes: it was not read")
    if kind != "blob":
        raise ConfigError(f"it is a {kind}, not a file")
    return parse(text.decode("utf-8", "replace").strip(), source=f"{CONFIG_PATH}@{commit[:7]}")


def _git(mirror: Path, *args: str) -> str | None:
    """Read-only git over the mirror (or, for `bot run`, the user's checkout, which an earlier
    agent could have written): the bot's hardened environment, so no config the repository
    carries can start a program (bot/workspace/git.py)."""
    done = run_capped_sync(["git", "-C", str(mirror), *args], cap=CONFIG_MAX_BYTES, env=git_env())
    if done.cut:
        raise ConfigError(f"the file is larger than {CONFIG_MAX_BYTES:,} bytes: it was not read")
    return done.stdout.decode("utf-8", "replace").strip() if done.code == 0 else None


def _key_lines(node: yaml.Node | None, prefix: str = "") -> dict[str, int]:
    """1-based line of every key, nested keys dotted (`limits.memory`)."""
    lines: dict[str, int] = {}
    if isinstance(node, yaml.SequenceNode):  # a list's entries by index (`automations.0.name`)
        for index, item in enumerate(node.value):
            lines[f"{prefix}{index}"] = item.start_mark.line + 1
            lines.update(_key_lines(item, f"{prefix}{index}."))
        return lines
    if not isinstance(node, yaml.MappingNode):
        return lines
    for key, value in node.value:
        name = f"{prefix}{key.value}"
        lines[name] = key.start_mark.line + 1
        lines.update(_key_lines(value, f"{name}."))
    return lines


def _build(data: dict[Any, Any], lines: dict[str, int], source: str) -> RepoConfig:
    try:
        model = BotYml.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _first_error(exc, lines, source) from None
    result = RepoConfig(source=source, **model.values())
    if result.default_agent and result.default_agent not in result.allowed_agents:
        raise ConfigError(f"`{result.default_agent}` is not in allowed_agents", key="default_agent",
                          line=lines.get("default_agent"), source=source)
    return result


def _first_error(exc: pydantic.ValidationError, lines: dict[str, int], source: str) -> ConfigError:
    """The error nearest the top of the file, in our words, naming its dotted key and line."""
    errors = [_config_error(error, lines, source) for error in exc.errors()]
    return min(errors, key=lambda err: err.line or 0)


def _config_error(error: Any, lines: dict[str, int], source: str) -> ConfigError:
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc)
    if error["type"] == "extra_forbidden":
        owner = _section_at(loc[:-1])
        message = owner.UNKNOWN.format(known=owner.known())
    elif error["type"] in ("model_type", "model_attributes_type", "dict_type") and _is_section(loc):
        owner = _section_at(loc)
        message = owner.MAPPING.format(known=owner.known())
    elif error["type"] == "missing":
        message = "is required"
    else:
        message = error["msg"]
    line = next((lines[".".join(loc[:n])] for n in range(len(loc), 0, -1) if ".".join(loc[:n]) in lines), None)
    return ConfigError(message, key=key, line=line, source=source)


def _section_at(loc: list[str]) -> type[Section]:
    """The section model that the key path `loc` names (BotYml for the top level)."""
    model: type[Section] = BotYml
    for name in loc:
        if name.isdigit():  # an entry of a list of sections (`automations.0`)
            continue
        model = _section_of(model.model_fields[name].annotation)
    return model


def _section_of(annotation: Any) -> Any:
    """The section type inside `tuple[X, ...]` or `X | None`, else the annotation itself."""
    for arg in typing.get_args(annotation):
        if isinstance(arg, type) and issubclass(arg, Section):
            return arg
    return annotation


def _is_section(loc: list[str]) -> bool:
    try:
        return isinstance(_section_at(loc), type) and issubclass(_section_at(loc), Section)
    except (KeyError, TypeError):
        return False


def size_bytes(text: str) -> int:
    """'512MiB', '2GiB', '1048576' as bytes (an operator's BOT_LIMIT_* value); ValueError if not."""
    try:
        return size(text)
    except pydantic_core.PydanticCustomError as exc:
        raise ValueError(exc.message()) from None
