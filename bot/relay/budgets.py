"""Budgets of model calls, enforced at the relay: per turn (tokens and money), per thread, per
requester per UTC day and per installation per UTC month, each in tokens and in USD; and the
money of one automation per UTC day (`automation_day_usd`, its `max_usd_per_day`).

The operator sets caps in the environment (`BOT_BUDGET_*`, read from the entry point's settings by
`operator_caps(settings)`); a repository may tighten them in `.github/bot.yml` (`budgets.<cap>`),
never loosen them: `effective_caps(operator, repo)`. An automation's run counts its calls against
the automation's day too (`Scope.automation`, keyed by `automation_key(repo, name)`), capped by the
automation's own `max_usd_per_day` (passed as the repository's `automation_day_usd`; the operator has
no such variable). A cap is reached once the spend is at or over
it; the next call is then refused (a call's size is only known once it is answered, so the call that
crosses a cap completes). Admission holds each call's maximum (`hold`) until the call is answered
and settled to its real usage (`settle`): held amounts count as spent, so calls in flight together
cross a cap by at most one call.

Spend outlives the episode in the `model_spend` table (one row per priced call, in the recorder's
database): `Ledger.spent(scope)` sums the thread's, the requester's day, the installation's
month and the automation's day. A `Budget` reads those sums once when the episode starts and adds
its own calls in memory; two episodes of one requester (or of one automation) at once may together
overshoot a daily cap by one call each.
The relay refuses a call of a model its price table cannot price (bot/relay/server.py), so every
charged call has a cost; `unpriced_calls` counts those recorded before it did.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from bot.db import Database
from bot.record.recorder import now_iso

if TYPE_CHECKING:
    from bot.config import Settings

REPO_FILE = ".github/bot.yml"
# cap -> (what it limits, in words)
CAPS = {"turn_tokens": "this turn's tokens", "turn_usd": "this turn's cost",
        "thread_tokens": "this thread's tokens", "thread_usd": "this thread's cost",
        "requester_day_tokens": "the requester's tokens today (UTC)",
        "requester_day_usd": "the requester's cost today (UTC)",
        "installation_month_tokens": "the installation's tokens this month (UTC)",
        "installation_month_usd": "the installation's cost this month (UTC)",
        "automation_day_usd": "this automation's cost today (UTC)"}
AUTOMATION_CAP = "automation_day_usd"  # set by the automation's `max_usd_per_day`, never by the environment
OPERATOR_CAPS = tuple(cap for cap in CAPS if cap != AUTOMATION_CAP)


@dataclass(frozen=True)
class Caps:
    """None: no cap. Tokens are whole numbers, money is USD."""

    turn_tokens: int | None = None
    turn_usd: float | None = None
    thread_tokens: int | None = None
    thread_usd: float | None = None
    requester_day_tokens: int | None = None
    requester_day_usd: float | None = None
    installation_month_tokens: int | None = None
    installation_month_usd: float | None = None
    automation_day_usd: float | None = None

    def __post_init__(self) -> None:
        for cap in fields(self):
            value = getattr(self, cap.name)
            if value is not None and not value >= 0:
                raise ValueError(f"budget {cap.name} must be a number at least 0, not {value!r}")

    def items(self) -> list[tuple[str, float]]:
        return [(cap.name, getattr(self, cap.name)) for cap in fields(self) if getattr(self, cap.name) is not None]


def env_name(cap: str) -> str:
    return f"BOT_BUDGET_{cap.upper()}"


def operator_caps(settings: Settings) -> Caps:
    caps: dict[str, Any] = {cap: settings.parsed(env_name(cap)) for cap in OPERATOR_CAPS}
    return Caps(**caps)


def effective_caps(operator: Caps, repo: Caps | None) -> Caps:
    """Each cap: the lower of the operator's and the repository's; a repository can add a cap the
    operator left open, or lower one, but a higher value than the operator's changes nothing."""
    if repo is None:
        return operator
    chosen = {}
    for cap in CAPS:
        values = [v for v in (getattr(operator, cap), getattr(repo, cap)) if v is not None]
        chosen[cap] = min(values) if values else None
    return Caps(**chosen)


@dataclass
class Spend:
    tokens: int = 0
    usd: float = 0.0
    unpriced_calls: int = 0

    def add(self, tokens: int, usd: float | None) -> None:
        self.tokens += tokens
        if usd is None:
            self.unpriced_calls += 1
        else:
            self.usd = round(self.usd + usd, 8)


@dataclass(frozen=True)
class Scope:
    """Who a turn's spend counts against (None: that window is not tracked)."""

    conversation: str | None = None
    requester: str | None = None
    installation: str | None = None
    automation: str | None = None  # automation_key(repo, name), for an automation's run


WINDOWS = ("thread", "requester_day", "installation_month", "automation_day")


def automation_key(repo: str, name: str) -> str:
    """Whose day an automation's spend counts against: one repository's automation (a repository's
    name is one case-insensitively on GitHub; an automation's name is a lowercase slug)."""
    return f"{repo.lower()}:{name}"


@dataclass(frozen=True)
class AutomationSpend:
    """An automation's run: its calls count against the automation's UTC day, capped at `usd_per_day`
    (its `max_usd_per_day`)."""

    repo: str
    name: str
    usd_per_day: float

    @property
    def key(self) -> str:
        return automation_key(self.repo, self.name)


def _window_start(window: str, now: datetime) -> str | None:
    if window in ("requester_day", "automation_day"):
        return now.replace(hour=0, minute=0, second=0, microsecond=0).isoformat(timespec="milliseconds")
    if window == "installation_month":
        return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0).isoformat(timespec="milliseconds")
    return None


class Ledger:
    """Spend per call in `model_spend` (the recorder's database)."""

    COLUMNS = {"window_thread": "conversation", "window_requester_day": "requester",
               "window_installation_month": "installation", "window_automation_day": "automation"}

    def __init__(self, db: Database):
        self.db = db

    def add(self, run_id: str, scope: Scope, tokens: int, usd: float | None) -> None:
        self.db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, automation, "
                        "tokens, usd) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [run_id, now_iso(), scope.conversation, scope.requester, scope.installation,
                         scope.automation, tokens, usd])

    def spent(self, scope: Scope, now: datetime | None = None) -> dict[str, Spend]:
        now = now or datetime.now(UTC)
        owners = {"thread": ("conversation", scope.conversation), "requester_day": ("requester", scope.requester),
                  "installation_month": ("installation", scope.installation),
                  "automation_day": ("automation", scope.automation)}
        sums = {}
        for window, (column, owner) in owners.items():
            if owner is None:
                continue
            start = _window_start(window, now) or ""
            row = self.db.execute(
                f"select coalesce(sum(tokens), 0) as tokens, coalesce(sum(usd), 0) as usd, "
                f"sum(case when usd is null then 1 else 0 end) as unpriced from model_spend "
                f"where {column} = ? and ts >= ?", [owner, start]).fetchone()
            assert row is not None  # an aggregate always returns one row
            sums[window] = Spend(int(row["tokens"]), float(row["usd"]), int(row["unpriced"] or 0))
        return sums


@dataclass(frozen=True)
class Exceeded:
    """A reached cap, worded for the model, the answer and the record."""

    cap: str
    spent: float
    limit: float
    raise_how: str
    held: float = 0  # what calls still being answered may cost at most

    @property
    def message(self) -> str:
        def unit(value: float) -> str:
            return f"${value:.4f}" if self.cap.endswith("_usd") else f"{int(value)} tokens"
        held = f" with up to {unit(self.held)} more held by calls still being answered" if self.held else ""
        return (f"budget reached: {CAPS[self.cap]} is {unit(self.spent)}{held} of a {unit(self.limit)} cap "
                f"({self.cap}); {self.raise_how}")


@dataclass(frozen=True)
class Hold:
    """The most one call in flight can cost, counted as spent until it is settled."""

    tokens: int
    usd: float


@dataclass
class Budget:
    """The caps of one episode and what it has spent against each."""

    operator: Caps = field(default_factory=Caps)
    repo: Caps | None = None
    prior: dict[str, Spend] = field(default_factory=dict)  # Ledger.spent(scope) at the start
    turn: Spend = field(default_factory=Spend)
    held_tokens: int = 0  # the holds of the calls in flight
    held_usd: float = 0.0

    @property
    def caps(self) -> Caps:
        return effective_caps(self.operator, self.repo)

    def spent(self, window: str) -> Spend:
        if window == "turn":
            return self.turn
        prior = self.prior.get(window)
        return replace(self.turn) if prior is None else Spend(
            prior.tokens + self.turn.tokens, round(prior.usd + self.turn.usd, 8),
            prior.unpriced_calls + self.turn.unpriced_calls)

    def charge(self, tokens: int, usd: float | None) -> None:
        self.turn.add(tokens, usd)

    def hold(self, tokens: int, usd: float | None) -> Hold:
        """Count a call's maximum as spent while it is in flight (an unpriced call holds no money)."""
        held = Hold(max(0, tokens), max(0.0, usd or 0.0))
        self.held_tokens += held.tokens
        self.held_usd = round(self.held_usd + held.usd, 8)
        return held

    def settle(self, held: Hold | None, tokens: int | None = None, usd: float | None = None) -> None:
        """Release a hold and charge what the call really cost (None tokens: nothing to charge)."""
        if held is not None:
            self.held_tokens -= held.tokens
            self.held_usd = max(0.0, round(self.held_usd - held.usd, 8))
        if tokens is not None:
            self.charge(tokens, usd)

    def exceeded(self) -> Exceeded | None:
        """The first cap already reached, counting the holds of calls in flight, else None."""
        for cap, limit in self.caps.items():
            window, _, unit = cap.rpartition("_")
            if window != "turn" and window not in self.prior:
                continue  # the scope of that window is unknown (a local run has no installation)
            spend = self.spent(window)
            held = self.held_usd if unit == "usd" else self.held_tokens
            used = spend.usd if unit == "usd" else spend.tokens
            if used + held >= limit:
                return Exceeded(cap, used, limit, self._raise_how(cap), held)
        return None

    def _raise_how(self, cap: str) -> str:
        if cap == AUTOMATION_CAP:
            return f"raise the automation's max_usd_per_day in the repository's {REPO_FILE}, or wait for tomorrow (UTC)"
        operator = getattr(self.operator, cap)
        repo = getattr(self.repo, cap) if self.repo else None
        if repo is not None and (operator is None or repo < operator):
            ceiling = f" up to the operator's {operator}" if operator is not None else ""
            return f"raise budgets.{cap} in the repository's {REPO_FILE}{ceiling}"
        return f"the operator can raise {env_name(cap)}"
