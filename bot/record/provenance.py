"""The provenance block under every answer (the collapsed summary after the answer), built from the run's record.

    prov = build(recorder, run_id, agent="codex", version="0.171.0", resumed=True,
                 duration_s=42.0, usage=result.usage, files_changed=["a.py", "b.py"],
                 pr_url="https://github.com/o/r/pull/13", session_id="...",
                 run_page=ctx.settings.run_url(run_id))  # the job's settings: BOT_PUBLIC_URL
    comment = prov.render(answer_text)   # answer + collapsed <details> block + hidden marker
    prov.as_dict()                       # the same data for tools (JSON-serialisable)

Tier counts come from the recorded events themselves, so what the comment says and
what `bot runs show` prints are the same numbers.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from adapters.base import Usage
from bot.db import Database
from bot.record.hidden import describe
from bot.record.recorder import Recorder
from sandbox.base import Limits

MARKER_RE = re.compile(r"<!-- bot:run (\{.*?\}) -->")
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,79}")
TIER_LEGEND = ("<sub>enforced: actions the bot itself carried out or checked (its tools, the model relay, "
               "the proxy) · attested: steps the agent's CLI reported, not checked · unobserved: what the "
               "bot cannot see</sub>")
_ATTESTED_LABELS = {"text": "messages", "progress": "progress", "thinking": "thinking",
                    "tool_use": "tool calls", "tool_result": "tool results",
                    "session": "session", "usage": "usage reports", "error": "errors", "done": "end"}


@dataclass
class Provenance:
    run_id: str
    agent: str
    version: str | None
    session: str  # "new session" | "resumed session" | "fresh session (…)"
    session_id: str | None
    conversation: str | None
    duration_s: float
    tokens: int | None
    cost_usd: float | None
    files_changed: list[str]
    mode: str
    tiers: dict[str, dict]  # tier -> {"count": n, "what": str, "items": {...}}
    declared_gaps: list[str]
    sandbox_tier: int | None
    limits: dict
    egress: dict
    base_commit: str | None
    commit: str | None = None
    pr_url: str | None = None
    status: str | None = None  # shown when not ok: "stopped", "timed out", "failed"
    change: str | None = None  # the bot's effect: "base 3f2a9c1 → 8d0e2b4 · 2 files +10 -3 · PR #13"
    extra: dict = field(default_factory=dict)
    unpriced_models: list[str] = field(default_factory=list)  # relayed models the price table lacks
    attempts: list[str] = field(default_factory=list)  # earlier agents' failed attempts and their spend
    run_page: str | None = None  # the run page's address, linked from the footer
    # The thread's cumulative spend after this turn ({"tokens": n, "usd": x}), what its thread caps
    # read from the ledger; the marker carries it so an Action's restore can keep it as a floor.
    thread_spend: dict | None = None

    def as_dict(self) -> dict:
        return asdict(self)

    def summary_line(self) -> str:
        parts = [f"{self.agent} {self.version}" if self.version else self.agent, self.session,
                 _duration(self.duration_s)]
        if self.tokens:
            parts.append(f"{_thousands(self.tokens)} tokens")
        if self.cost_usd:
            parts.append(f"${self.cost_usd:.2f}" if self.cost_usd >= 0.01 else "<$0.01")
        if self.unpriced_models:
            parts.append("price unknown for " + ", ".join(self.unpriced_models))
        changed = f"{len(self.files_changed)} file{'s' if len(self.files_changed) != 1 else ''} changed"
        parts.append(changed + (" (native mode, attested)" if self.mode == "native" else ""))
        if self.pr_url:
            number = self.pr_url.rstrip("/").rsplit("/", 1)[-1]
            parts.append(f"PR #{number}" if number.isdigit() else self.pr_url)
        elif self.commit:
            parts.append(f"commit {self.commit[:7]}")
        if self.status and self.status not in ("ok", "done"):
            parts.append(self.status)
        parts += [f"before: {attempt}" for attempt in self.attempts]
        if self.tiers["enforced"]["count"] or self.tiers["attested"]["count"]:
            parts.append(self.record_words())
        return " · ".join(parts)

    def record_words(self) -> str:
        """The record's enforced and attested counts, in a maintainer's words (the same counts as
        `bot runs show`): "7 actions checked by the bot · 15 steps the agent reported"."""
        enforced, attested = self.tiers["enforced"]["count"], self.tiers["attested"]["count"]
        return (f"{enforced} action{'s' if enforced != 1 else ''} checked by the bot · "
                f"{attested} step{'s' if attested != 1 else ''} the agent reported")

    def unseen_words(self) -> str:
        """What the bot could not see, or "" when nothing is declared."""
        items = self.tiers["unobserved"].get("items") or []
        return f"not visible to the bot: {self.tiers['unobserved']['what']}" if items else ""

    def footer_line(self) -> str:
        parts = [f"sandbox tier {self.sandbox_tier}" if self.sandbox_tier is not None else "sandbox tier ?"]
        hosts = sorted(h for h, c in self.egress.items() if c.get("allowed"))
        parts.append("egress: " + (", ".join(hosts) if hosts else "none"))
        denied = sum(c.get("denied", 0) for c in self.egress.values())
        if denied:
            parts.append(f"{denied} egress denied")
        if self.limits:
            known = {k: v for k, v in self.limits.items() if k in Limits.__dataclass_fields__}
            parts.append(Limits(**known).describe())
        if self.change:
            parts.append(self.change)
        elif self.base_commit:
            parts.append(f"base {self.base_commit[:7]}")
        run = f"run {self.run_id[:8]}…"
        parts.append(f"[{run}]({self.run_page})" if self.run_page else run)
        return " · ".join(parts)

    def details_block(self) -> str:
        rows = ["| tier | count | what |", "|---|---|---|"]
        for tier in ("enforced", "attested"):
            rows.append(f"| {tier} | {self.tiers[tier]['count']} | {_cell(self.tiers[tier]['what'])} |")
        rows.append(f"| unobserved | — | {_cell(self.tiers['unobserved']['what'])} |")
        hidden = self.extra.get("hidden_removed") or {}
        note = (f"\n\nhidden content removed: {describe(Counter(hidden))}, from the thread before the agent "
                f"read it" if sum(hidden.values()) else "")
        return (f"<details><summary>{_cell(self.summary_line())}</summary>\n\n" + "\n".join(rows)
                + f"\n\n{TIER_LEGEND}\n\n{self.footer_line()}{note}\n</details>")

    def summary_block(self) -> str:
        """The collapsed summary line alone, for a text that is not the answer (a review's body): the
        details stay in the answer and on the run page, which it links when there is one."""
        run = f"run {self.run_id[:8]}…"
        link = f"[{run}]({self.run_page})" if self.run_page else run
        return f"<sub>{_cell(self.summary_line())} · {link}</sub>"

    def marker(self) -> str:
        payload: dict[str, Any] = {"conversation": self.conversation, "backend": self.agent,
                                   "session": self.session_id, "run": self.run_id}
        if self.thread_spend:
            payload["spend"] = self.thread_spend
        text = json.dumps(payload, separators=(",", ":")).replace(">", "\\u003e")
        return f"<!-- bot:run {text} -->"

    def render(self, answer: str) -> str:
        return f"{answer.rstrip()}\n\n{self.details_block()}\n{self.marker()}"


def build(recorder: Recorder, run_id: str, *, agent: str | None = None, version: str | None = None,
          resumed: bool | None = None, fresh_reason: str | None = None, duration_s: float = 0.0,
          usage: Usage | None = None, files_changed: list[str] | None = None,
          session_id: str | None = None, commit: str | None = None, pr_url: str | None = None,
          change: str | None = None, status: str | None = None, run_page: str | None = None) -> Provenance:
    """Everything the block says, from the run row, its events and what the pipeline knows.
    `run_page`: the run page's address (the settings' `run_url`), linked unless the run is local."""
    run = recorder.run(run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}")
    events = recorder.events(run_id)
    gaps = [e["raw"] for e in events if e["tier"] == "unobserved"]
    relayed = model_spend(events)
    if relayed is not None:  # the relay counted every call: enforced, where the CLI's own count is a claim
        usage = relayed
    prov = Provenance(
        run_id=run_id, agent=agent or run["agent"], version=version or run.get("agent_version"),
        session=_session_label(resumed, fresh_reason), session_id=session_id or run.get("session_id"),
        conversation=run.get("conversation"), duration_s=duration_s,
        tokens=usage.total_tokens if usage else None, cost_usd=usage.cost_usd if usage else None,
        files_changed=list(files_changed or []), mode=run.get("mode") or "strict",
        tiers=tier_summary(events, run["egress"]), declared_gaps=gaps,
        sandbox_tier=run.get("sandbox_tier"), limits=run["limits"], egress=run["egress"],
        base_commit=run.get("base_commit"), commit=commit, pr_url=pr_url, change=change, status=status,
        extra=_thread_context(events), unpriced_models=unpriced_models(events),
        attempts=failed_attempts(recorder, events), thread_spend=thread_spend(recorder.db, run.get("conversation")),
        run_page=None if (run.get("conversation") or "local:").startswith("local:") else run_page)
    return _redacted(prov, recorder)


def thread_spend(db: Database, conversation: str | None) -> dict | None:
    """The thread's spend so far as its thread caps read it (bot/relay/budgets.py), or None when
    it has none: {"tokens": n, "usd": x}."""
    if not conversation or "model_spend" not in db.table_names():
        return None
    # the relay's ledger rows (bot/relay/budgets.py Ledger.spent, window "thread": all time), summed
    # here since the record sits below the relay
    row = db.execute("select coalesce(sum(tokens), 0) as tokens, coalesce(sum(usd), 0) as usd from model_spend "
                     "where conversation = ? and ts >= ?", [conversation, ""]).fetchone()
    tokens, usd = (int(row["tokens"]), float(row["usd"])) if row is not None else (0, 0.0)
    return {"tokens": tokens, "usd": usd} if tokens or usd else None


def failed_attempts(recorder: Recorder, events: list[dict]) -> list[str]:
    """The earlier attempts this run answered for (`fallback` events, bot/job/fallback.py), each with
    what its model calls spent: "claude overloaded (HTTP 529), 1.2k tokens, $0.01"."""
    lines = []
    for event in events:
        if event["kind"] != "fallback" or event["tier"] != "enforced":
            continue
        detail = _detail(event)
        spent = model_spend(recorder.events(str(detail.get("run") or ""))) or Usage()
        cost = spent.cost_usd or 0.0
        shown = f"${cost:.2f}" if cost >= 0.01 or not cost else "<$0.01"
        what = str(detail.get("kind") or "unavailable").replace("_", " ")
        lines.append(f"{_model_id(detail.get('agent'))} {what} (HTTP {int(detail.get('status') or 0)}), "
                     f"{_thousands(spent.total_tokens)} tokens, {shown}")
    return lines


def _thread_context(events: list[dict]) -> dict:
    """What the bot's view of the thread left out (bot.job.thread_text records it)."""
    for event in reversed(events):
        if event["kind"] == "thread_context" and event["tier"] == "enforced":
            try:
                return {"hidden_removed": json.loads(event["raw"] or "{}").get("hidden_removed") or {}}
            except (json.JSONDecodeError, AttributeError):
                return {}
    return {}


def tier_summary(events: list[dict], egress: dict) -> dict[str, dict]:
    """Per tier: the exact count of recorded events and a one-line account of them."""
    by_tier: dict[str, list[dict]] = {"enforced": [], "attested": [], "unobserved": []}
    for event in events:
        by_tier[event["tier"]].append(event)
    return {"enforced": _enforced(by_tier["enforced"]), "attested": _attested(by_tier["attested"]),
            "unobserved": _unobserved(by_tier["unobserved"], egress)}


def model_spend(events: list[dict]) -> Usage | None:
    """Tokens and list-price cost of the model calls the relay recorded (None: no relayed call).
    The cost is None when no call was priced; unpriced calls count in tokens only."""
    calls = [_detail(e) for e in events if e["kind"] == "model_call" and e["tier"] == "enforced"]
    if not calls:
        return None
    total, cost = Usage(), None
    for detail in calls:
        tokens = detail.get("tokens") or {}
        cached = tokens.get("cached_tokens", 0)  # counted in the total, as the relay's budgets count it
        total = total.add(Usage(tokens.get("input_tokens", 0) + tokens.get("cache_write_tokens", 0) + cached,
                                tokens.get("output_tokens", 0), cached))
        if isinstance(detail.get("cost_usd"), (int, float)):
            cost = (cost or 0.0) + detail["cost_usd"]
    total.cost_usd = cost
    return total


def unpriced_models(events: list[dict]) -> list[str]:
    """The models of relayed calls that used tokens the price table could not price, in call order."""
    details = [_detail(e) for e in events if e["kind"] == "model_call" and e["tier"] == "enforced"]
    models = [_model_id(d.get("model")) for d in details if d.get("cost_usd") == "unpriced"]
    return list(dict.fromkeys(models))


def _model_id(name: object) -> str:
    """The agent chose the name: only a plain model id is repeated in the comment."""
    text = str(name or "")
    return text if _MODEL_ID.fullmatch(text) else "a model with an unlisted name"


def _detail(event: dict) -> dict:
    try:
        detail = json.loads(event["raw"] or "{}")
    except json.JSONDecodeError:
        return {}
    return detail if isinstance(detail, dict) else {}


def _model_calls(events: list[dict]) -> str | None:
    """The enforced row's account of relayed model calls: "model: 4 calls (1 refused), 2 retries"."""
    calls = [e for e in events if e["kind"] == "model_call"]
    if not calls:
        return None
    refused = sum(1 for e in calls if (e["outcome"] or "").startswith("refused"))
    retries = sum(1 for e in events if e["kind"] == "model_retry")
    text = f"model: {len(calls)} call{'s' if len(calls) != 1 else ''}" + (f" ({refused} refused)" if refused else "")
    return text + (f", {retries} retr{'ies' if retries != 1 else 'y'}" if retries else "")


def _enforced(events: list[dict]) -> dict:
    model = _model_calls(events)
    events_shown = [e for e in events if e["kind"] not in ("model_call", "model_retry")]
    calls = Counter(e["tool"] for e in events if e["kind"] == "tool_call")
    refused = Counter(e["tool"] for e in events if e["kind"] == "tool_call"
                      and (e["outcome"] or "").startswith("refused"))
    acts = Counter(e["kind"] for e in events_shown if e["kind"] != "tool_call")
    parts = [model] if model else []
    if calls:
        parts.append("bridge: " + ", ".join(
            f"{tool} ×{n}" + (f" ({refused[tool]} refused)" if refused[tool] else "")
            for tool, n in calls.most_common()))
    parts += [f"{kind} ×{n}" for kind, n in acts.most_common()]
    return {"count": len(events), "what": "; ".join(parts) or "no bridged calls",
            "items": {"calls": dict(calls), "refused": dict(refused), "acts": dict(acts)}}


def _attested(events: list[dict]) -> dict:
    kinds = Counter(e["kind"] for e in events)
    listed = ", ".join(f"{_ATTESTED_LABELS.get(k, k)} ×{n}" for k, n in kinds.most_common())
    what = f"what the CLI reported: {listed}" if listed else "nothing reported"
    return {"count": len(events), "what": what, "items": dict(kinds)}


def _unobserved(events: list[dict], egress: dict) -> dict:
    parts = [e["raw"] for e in events]
    for host, counts in sorted(egress.items()):
        if counts.get("allowed"):
            parts.append(f"its traffic to {host} ({counts['allowed']} connections, proxy-logged)")
    return {"count": len(events), "what": "; ".join(parts) or "none declared", "items": parts}


def web_access_gap(agent: str) -> str:
    """The unobserved channel a repository opens with `web_access: true` (declared per run)."""
    return f"web access on: {agent}'s web search runs at the provider, unseen by the proxy"



def _session_label(resumed: bool | None, fresh_reason: str | None) -> str:
    if resumed:
        return "resumed session"
    return f"new session ({fresh_reason})" if fresh_reason else "new session"


def _redacted(prov: Provenance, recorder: Recorder) -> Provenance:
    data = json.loads(recorder.redact(json.dumps(prov.as_dict())))
    return Provenance(**data)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _thousands(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
