"""The schema of `.github/bot.yml`: one pydantic model per section, strict, unknown keys refused.

Each value type carries its own check (a `BeforeValidator` raising `Invalid`), so the message a
user reads is ours ("`copilot` is not an agent (one of: …)"), not pydantic's; bot/workspace/
repo_config.py turns the first error into a `ConfigError` naming the key and its line.

To add a section (say `review:`): write `class ReviewSection(Section)` with its fields (each
`Annotated[<type>, BeforeValidator(<check>)]` or a plain strict type), add `review: ReviewSection
= ReviewSection()` to `BotYml` and a `review` field to `RepoConfig`; override `UNKNOWN` and
`MAPPING` for the section's messages and `value()` if the runtime wants something else than the
section itself. Line numbers of nested keys come for free (`review.<key>`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, model_validator
from pydantic_core import PydanticCustomError

from adapters import base as adapters
from bot import config
from bot import cron as crontab
from bot.config.kinds import parse_size
from bot.permissions import PERMISSION_LEVELS, levels_from
from bot.record import inert
from bot.trigger_table import TRIGGERS, Trigger
from bot.workspace import rule_globs

MODES = ("strict", "native")
SEVERITIES = ("important", "pre-existing", "nit")  # of review findings, most severe first
REGISTRY_HOSTS = {
    "pypi": ("pypi.org", "files.pythonhosted.org"),
    "npm": ("registry.npmjs.org",),
    "crates": ("crates.io", "index.crates.io", "static.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org"),
    "rubygems": ("rubygems.org", "index.rubygems.org"),
    "maven": ("repo.maven.apache.org", "repo1.maven.org"),
}
# the operator's BOT_BUDGET_<CAP> variables, as `budgets.<cap>` keys: cap -> its parser (int or float)
BUDGET_KEYS = {v.name.removeprefix("BOT_BUDGET_").lower(): v.parse
               for v in config.VARIABLES if v.name.startswith("BOT_BUDGET_")}
_HOST = re.compile(r"^\.?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$", re.IGNORECASE)
INVALID = "bot_yml"  # the pydantic error type of our own checks


def invalid(message: str) -> PydanticCustomError:
    """An error whose text is `message` verbatim (a template would choke on braces in values)."""
    return PydanticCustomError(INVALID, "{reason}", {"reason": message})


# value checks: each returns the normalised value or raises invalid(...)

def agent(value: Any) -> str:
    if value not in adapters.names():
        raise invalid(f"{inert.code(value)} is not an agent (one of: {', '.join(adapters.names())})")
    return str(value)


def agents(value: Any) -> tuple[str, ...]:
    items = string_list(value)
    for item in items:
        agent(item)
    if not items:
        raise invalid("must name at least one agent")
    return items


def fallback_agents(value: Any) -> tuple[str, ...]:
    """Agents to try in order when one's provider cannot serve; each once (none may repeat)."""
    items = string_list(value)
    for item in items:
        agent(item)
    if len(set(items)) != len(items):
        raise invalid("names an agent twice")
    return items


def permissions(value: Any) -> tuple[str, ...]:
    """`write` means write and above; a list names the exact levels."""
    items = (value,) if isinstance(value, str) else string_list(value)
    for item in items:
        if item not in PERMISSION_LEVELS:
            raise invalid(f"{inert.code(item)} is not a permission level (one of: {', '.join(PERMISSION_LEVELS)})")
    return levels_from(value) if isinstance(value, str) else items


def mode(value: Any) -> str:
    if value not in MODES:
        raise invalid(f"{inert.code(value)} is not a mode (strict or native)")
    return str(value)


def severity(value: Any) -> str:
    if value not in SEVERITIES:
        raise invalid(f"{inert.code(value)} is not a severity (important, pre-existing or nit)")
    return str(value)


def path_patterns(value: Any) -> tuple[str, ...]:
    items = string_list(value)
    if any(not item.strip() for item in items):
        raise invalid("an empty pattern is not allowed")
    return items


def review_rules(value: Any) -> tuple[tuple[str, str], ...]:
    """`reviews.rules`: path globs (bot/workspace/rule_globs.py) to instructions, in the order written."""
    if not isinstance(value, dict):
        raise invalid('must be a mapping of path globs to instructions ("api/**": Validate input first.)')
    if len(value) > rule_globs.MAX_CONFIG_RULES:
        raise invalid(f"holds {len(value)} rules: at most {rule_globs.MAX_CONFIG_RULES} are allowed")
    return tuple(_review_rule(glob, text) for glob, text in value.items())


def _review_rule(glob: Any, text: Any) -> tuple[str, str]:
    if not isinstance(glob, str):
        raise invalid(f"{inert.code(glob)} is not a path glob: write it in quotes")
    if (wrong := rule_globs.problem(glob)) is not None:
        raise invalid(f"{inert.code(glob)}: {wrong}")
    if not isinstance(text, str) or not text.strip():
        raise invalid(f"the instruction for {inert.code(glob)} must be a text")
    if len(text) > rule_globs.MAX_INSTRUCTION_CHARS:
        raise invalid(f"the instruction for {inert.code(glob)} is over {rule_globs.MAX_INSTRUCTION_CHARS:,} characters")
    return glob, text.strip()


def hosts(value: Any) -> tuple[str, ...]:
    items = string_list(value)
    for item in items:
        if not _HOST.match(item) or "*" in item:
            raise invalid(f"{inert.code(item)} is not a host name (use `.example.com` for subdomains)")
    return items


def registries(value: Any) -> tuple[str, ...]:
    items = string_list(value)
    for item in items:
        if item not in REGISTRY_HOSTS:
            raise invalid(f"{inert.code(item)} is not a known registry (one of: {', '.join(REGISTRY_HOSTS)})")
    return items


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise invalid(f"must be true or false, not {inert.code(value)}")
    return value


def string_list(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid("must be a list of strings")
    return tuple(value)


def whole(low: int, high: int) -> Callable[[Any], int]:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise invalid(f"must be a whole number from {low} to {high}, not {inert.code(value)}")
        return value
    return check


def size(value: Any) -> int:
    """'512MiB', '2GiB', '1048576' as bytes, within 64MiB..64GiB."""
    count = parse_size(str(value)) if not isinstance(value, bool) else None
    if count is None:
        raise invalid(f"{inert.code(value)} is not a size (e.g. 2GiB, 512MiB)")
    if not 64 << 20 <= count <= 64 << 30:
        raise invalid(f"{inert.code(value)} is outside 64MiB..64GiB")
    return count


def duration(value: Any) -> float:
    match = _DURATION.match(str(value)) if not isinstance(value, bool) else None
    if not match:
        raise invalid(f"{inert.code(value)} is not a duration (e.g. 300s, 10m)")
    seconds = float(match.group(1)) * {"s": 1, "m": 60, "h": 3600}[(match.group(2) or "s").lower()]
    if not 10 <= seconds <= 6 * 3600:
        raise invalid(f"{inert.code(value)} is outside 10s..6h")
    return seconds


def amount(is_whole: bool) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or not value >= 0 or (is_whole and not isinstance(value, int)):
            raise invalid(f"must be a {'whole number' if is_whole else 'number'} at least 0, not {inert.code(value)}")
        return value if is_whole else float(value)
    return check


def dollars(low: float, high: float) -> Callable[[Any], float]:
    """A sum of money in USD, from `low` to `high`: a whole or decimal number (YAML's), nothing else."""
    def check(value: Any) -> float:
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or not low <= value <= high:
            raise invalid(f"must be a number of US dollars from {low:g} to {high:g}, not {inert.code(value)}")
        return float(value)
    return check


Agent = Annotated[str | None, BeforeValidator(agent)]
Agents = Annotated[tuple[str, ...], BeforeValidator(agents)]
FallbackAgents = Annotated[tuple[str, ...], BeforeValidator(fallback_agents)]
Permissions = Annotated[tuple[str, ...], BeforeValidator(permissions)]
Mode = Annotated[str, BeforeValidator(mode)]
Severity = Annotated[str, BeforeValidator(severity)]
PathPatterns = Annotated[tuple[str, ...], BeforeValidator(path_patterns)]
Hosts = Annotated[tuple[str, ...], BeforeValidator(hosts)]
Registries = Annotated[tuple[str, ...], BeforeValidator(registries)]
ReviewRules = Annotated[tuple[tuple[str, str], ...], BeforeValidator(review_rules)]
Flag = Annotated[bool, BeforeValidator(boolean)]
Size = Annotated[int | None, BeforeValidator(size)]
Duration = Annotated[float | None, BeforeValidator(duration)]
TokenBudget = Annotated[int | None, BeforeValidator(amount(True))]
MoneyBudget = Annotated[float | None, BeforeValidator(amount(False))]


class Section(BaseModel):
    """A mapping in bot.yml: strict, frozen, unknown keys refused with the section's own words."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    UNKNOWN: ClassVar[str] = "unknown key (known: {known})"
    MAPPING: ClassVar[str] = "must be a mapping with any of {known}"

    @classmethod
    def known(cls) -> str:
        return ", ".join(cls.model_fields)

    @model_validator(mode="before")
    @classmethod
    def _string_keys(cls, data: Any) -> Any:
        # YAML allows `1: x` or `true: x`; as keys they are just unknown names
        return {str(k): v for k, v in data.items()} if isinstance(data, dict) else data

    def value(self) -> Any:
        """What RepoConfig holds for this section (the section itself unless overridden)."""
        return self


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


class LimitsSection(Section):
    UNKNOWN: ClassVar[str] = "unknown limit (known: {known})"
    memory: Size = None
    timeout: Duration = None
    pids: Annotated[int | None, BeforeValidator(whole(16, 65536))] = None
    connections: Annotated[int | None, BeforeValidator(whole(4, 4096))] = None
    worktree: Size = None
    home: Size = None
    tmp: Size = None

    _RUNTIME: ClassVar[dict[str, str]] = {
        "memory": "memory_bytes", "timeout": "timeout_s", "pids": "pids", "connections": "connections",
        "worktree": "worktree_bytes", "home": "home_bytes", "tmp": "tmp_bytes"}

    def value(self) -> RepoLimits:
        return RepoLimits(**{self._RUNTIME[key]: getattr(self, key) for key in self.model_fields_set})


class BudgetsSection(Section):
    """Model budgets by cap name: the keys mirror the operator's BOT_BUDGET_* (a test checks)."""

    UNKNOWN: ClassVar[str] = "unknown budget (known: {known})"
    turn_tokens: TokenBudget = None
    turn_usd: MoneyBudget = None
    thread_tokens: TokenBudget = None
    thread_usd: MoneyBudget = None
    requester_day_tokens: TokenBudget = None
    requester_day_usd: MoneyBudget = None
    installation_month_tokens: TokenBudget = None
    installation_month_usd: MoneyBudget = None

    def value(self) -> dict[str, float]:
        return {key: getattr(self, key) for key in type(self).model_fields if key in self.model_fields_set}


class TriggersSection(Section):
    """`triggers:` — ways to call the bot besides a comment (docs/reviews.md), each off unless set here."""

    UNKNOWN: ClassVar[str] = "unknown trigger (known: {known})"
    labels: Flag = False  # `bot:review` / `bot:<agent>` on an issue or pull request
    assignment: Flag = False  # the issue or pull request assigned to the bot's account
    review_requested: Flag = False  # a review requested from the bot's account
    pull_request_opened: Flag = False  # every pull request opened (or made ready) is reviewed
    drafts: Flag = False  # with pull_request_opened: drafts too


class ReviewsSection(Section):
    """`reviews:` — pull-request reviews (docs/reviews.md)."""

    UNKNOWN: ClassVar[str] = "unknown reviews key (known: {known})"
    agents: Agents = ()  # who reviews when no agent is named (a trigger): default the default agent
    budget: Annotated[int, BeforeValidator(whole(1_000, 2_000_000))] = 60_000  # diff characters per agent
    verdicts: Flag = False  # a review may approve or request changes (else it is always a comment)
    min_severity: Severity = "nit"  # the lowest severity posted: nit is everything
    max_comments: Annotated[int, BeforeValidator(whole(1, 100))] = 10  # inline comments; the rest in the body
    check_run: Flag = False  # each review is also a check run on the head commit
    fail_on: Severity = "important"  # the check run fails on a finding at or above this
    on_push: Flag = False  # a push to a pull request the bot reviewed queues an incremental review
    rules: ReviewRules = ()  # (glob, instruction): what the agents are told for the files a glob covers
    quiet: Flag = True  # a review with nothing at or above min_severity leaves no comment (a 👍 and the check run)


AUTOMATION_MAY = ("comment", "label", "push", "draft_pull_request", "review")  # what an automation may do
MAX_AUTOMATIONS = 50
MAX_PROMPT_CHARS = 8_000
MAX_SCHEDULES = 10
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
# the event values an automation may name, per event (docs/automations.md)
ISSUE_TYPES = ("opened", "edited", "reopened", "labeled")
PULL_TYPES = ("opened", "synchronize", "ready_for_review", "labeled")
CONCLUSIONS = ("failure", "timed_out", "cancelled", "action_required", "success", "neutral")
MAX_FILTERS = 20  # labels or branches one pull_request trigger names
_LABEL = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,50}$")  # GitHub's label names: at most 50 characters
_BRANCH = re.compile(r"^[A-Za-z0-9._/*-]{1,255}$")  # a base branch's name, `*` within a part, `**` across


def one_of(allowed: tuple[str, ...], what: str) -> Callable[[Any], tuple[str, ...]]:
    def check(value: Any) -> tuple[str, ...]:
        items = string_list(value)
        for item in items:
            if item not in allowed:
                raise invalid(f"{inert.code(item)} is not {what} (one of: {', '.join(allowed)})")
        if not items:
            raise invalid(f"must name at least one {what}")
        return tuple(dict.fromkeys(items))
    return check


def slug(value: Any) -> str:
    if not isinstance(value, str) or not _SLUG.match(value):
        raise invalid(f"{inert.code(value)} is not a name: lower-case letters, digits and `-`, at most 63")
    return value


def prompt(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise invalid("must be a text: what the agent is asked to do")
    if len(value) > MAX_PROMPT_CHARS:
        raise invalid(f"is over {MAX_PROMPT_CHARS:,} characters")
    return value.strip()


def schedules(value: Any) -> tuple[str, ...]:
    """`schedule: [{cron: "0 6 * * 1"}, …]`, each checked by bot/cron.py, in UTC."""
    if not isinstance(value, list) or not value or len(value) > MAX_SCHEDULES:
        raise invalid(f'must be a list of 1 to {MAX_SCHEDULES} entries like {{cron: "0 6 * * 1"}}')
    found = []
    for entry in value:
        if not isinstance(entry, dict) or set(entry) != {"cron"}:
            raise invalid(f'each entry is {{cron: "…"}} and nothing else, not {inert.code(entry)}')
        try:
            found.append(crontab.parse(entry["cron"]).text)
        except crontab.CronError as exc:
            raise invalid(f"{inert.code(entry['cron'])}: {exc}") from None
    return tuple(found)


def _filters(value: Any, what: str, ok: Callable[[str], bool]) -> tuple[str, ...]:
    items = string_list(value)
    if not 1 <= len(items) <= MAX_FILTERS:
        raise invalid(f"must name 1 to {MAX_FILTERS} {what}s")
    for item in items:
        if not ok(item):
            raise invalid(f"{inert.code(item)} is not {what}")
    return tuple(dict.fromkeys(items))


def label_names(value: Any) -> tuple[str, ...]:
    """`labels: [bug, "needs triage"]`: label names, at most 50 characters, no control characters."""
    return _filters(value, "a label name", lambda item: bool(_LABEL.match(item)) and item == item.strip())


def branch_patterns(value: Any) -> tuple[str, ...]:
    """`branches: [main, "release/*"]`: base branch names, `*` matching within a `/` part, `**` across."""
    def ok(item: str) -> bool:
        return bool(_BRANCH.match(item)) and ".." not in item and "//" not in item \
            and not item.startswith(("/", "-")) and not item.endswith("/")
    return _filters(value, "a branch name or pattern", ok)


def automation_list(value: Any) -> tuple[Any, ...]:
    if not isinstance(value, list):
        raise invalid("must be a list of automations (- name: …)")
    if len(value) > MAX_AUTOMATIONS:
        raise invalid(f"holds {len(value)} automations: at most {MAX_AUTOMATIONS} are allowed")
    return tuple(value)


def unique_names(value: tuple[Any, ...]) -> tuple[Any, ...]:
    names = [item.name for item in value]
    if twice := sorted({name for name in names if names.count(name) > 1}):
        raise invalid(f"the name {inert.code(twice[0])} is used twice")
    return value


class IssuesOn(Section):
    UNKNOWN: ClassVar[str] = "unknown key (known: {known})"
    types: Annotated[tuple[str, ...], BeforeValidator(one_of(ISSUE_TYPES, "an issue action"))] = ("opened",)


class PullRequestOn(Section):
    UNKNOWN: ClassVar[str] = "unknown key (known: {known})"
    types: Annotated[tuple[str, ...], BeforeValidator(one_of(PULL_TYPES, "a pull-request action"))] = ("opened",)
    labels: Annotated[tuple[str, ...], BeforeValidator(label_names)] = ()  # it carries one (labeled: it was added)
    branches: Annotated[tuple[str, ...], BeforeValidator(branch_patterns)] = ()  # its base branch matches one


class ConclusionOn(Section):
    UNKNOWN: ClassVar[str] = "unknown key (known: {known})"
    conclusion: Annotated[tuple[str, ...], BeforeValidator(one_of(CONCLUSIONS, "a conclusion"))] = ("failure",)


class NothingOn(Section):
    """`issue_comment: {}`, `fire: {}`, `dependabot_alert: {}`, `code_scanning_alert: {}`: the event
    takes no options."""

    UNKNOWN: ClassVar[str] = "takes no options: write {{}}"
    MAPPING: ClassVar[str] = "must be {{}}"


class OnSection(Section):
    """`on:` exactly one trigger (GitHub Actions' words)."""

    UNKNOWN: ClassVar[str] = "unknown event (known: {known})"
    MAPPING: ClassVar[str] = "must be a mapping naming one event of {known}"
    issues: IssuesOn | None = None
    issue_comment: NothingOn | None = None
    pull_request: PullRequestOn | None = None
    check_suite: ConclusionOn | None = None
    workflow_run: ConclusionOn | None = None
    schedule: Annotated[tuple[str, ...] | None, BeforeValidator(schedules)] = None
    fire: NothingOn | None = None
    dependabot_alert: NothingOn | None = None  # created
    code_scanning_alert: NothingOn | None = None  # created

    @model_validator(mode="after")
    def _exactly_one(self) -> OnSection:
        if len(self.model_fields_set) != 1:
            raise invalid(f"names {len(self.model_fields_set)} events: exactly one of {self.known()}")
        return self

    @property
    def event(self) -> str:
        return next(iter(self.model_fields_set))


class Automation(Section):
    """One entry of `automations:` (docs/automations.md)."""

    UNKNOWN: ClassVar[str] = "unknown automation key (known: {known})"
    MAPPING: ClassVar[str] = "each automation is a mapping with {known}"
    name: Annotated[str, BeforeValidator(slug)]
    on: OnSection
    agent: Annotated[str, BeforeValidator(agent)]
    prompt: Annotated[str, BeforeValidator(prompt)]
    may: Annotated[tuple[str, ...], BeforeValidator(one_of(AUTOMATION_MAY, "an allowed act"))] = ("comment",)
    max_attempts: Annotated[int, BeforeValidator(whole(1, 10))] = 2
    max_runs_per_day: Annotated[int, BeforeValidator(whole(1, 1000))] = 50  # per UTC day (bot/automations/caps.py)
    # model cost per UTC day, at the relay (bot/relay/budgets.py) and at the claim: a default, because
    # anyone can cause an event (docs/automations.md, "Caps")
    max_usd_per_day: Annotated[float, BeforeValidator(dollars(0.01, 10_000))] = 10.0

    @model_validator(mode="before")
    @classmethod
    def _string_keys(cls, data: Any) -> Any:
        # YAML 1.1 reads a bare `on:` key as true, as GitHub Actions users know: here it means `on`
        if not isinstance(data, dict):
            return data
        return {("on" if key is True else str(key)): value for key, value in data.items()}

    def allows(self, act: str) -> bool:
        return act in self.may


Automations = Annotated[tuple[Automation, ...], AfterValidator(unique_names), BeforeValidator(automation_list)]


class BotYml(Section):
    """The whole file; each field is a top-level key (docs/repo-config.md)."""

    UNKNOWN: ClassVar[str] = "unknown key (known keys: {known})"
    default_agent: Agent = None
    allowed_agents: Agents = tuple(adapters.names())
    fallback: FallbackAgents = ()  # agents to try when the chosen one's provider cannot serve
    trigger_permissions: Permissions = ("write", "maintain", "admin")
    mode: Mode = "strict"
    protected_paths: PathPatterns = (".github/workflows/**",)
    limits: LimitsSection = LimitsSection()
    egress_hosts: Hosts = ()
    package_registries: Registries = ()
    open_pull_requests: Flag = False
    allow_fork_push: Flag = False
    close_issue: Flag = True
    web_access: Flag = False
    budgets: BudgetsSection = BudgetsSection()
    triggers: TriggersSection = TriggersSection()
    reviews: ReviewsSection = ReviewsSection()
    automations: Automations = ()

    @classmethod
    def known(cls) -> str:
        return ", ".join(sorted(cls.model_fields))

    def values(self) -> dict[str, Any]:
        """The keys the file set, as RepoConfig field values."""
        return {key: (item.value() if isinstance(item := getattr(self, key), Section) else item)
                for key in self.model_fields_set}


def check_switches(triggers: Sequence[Trigger] = TRIGGERS) -> None:
    """Every automatic trigger's switch is a key of its section here: one the file could not name
    would stay off without a word. Checked at import, so a new trigger without its key fails loudly."""
    for trigger in triggers:
        section = BotYml.model_fields.get(trigger.section)
        keys = getattr(section.annotation, "model_fields", {}) if section is not None else {}
        if trigger.key not in keys:
            raise TypeError(f"trigger {trigger.name!r}: .github/bot.yml has no {trigger.switch}")


check_switches()
