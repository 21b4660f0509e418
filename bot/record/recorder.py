"""The record of every run: `runs` and `run_events` in the bot database (bot/db).

One `Recorder` per process or per episode; it owns these two tables:

    recorder = Recorder(db, secrets=credentials.secret_values())
    run_id = recorder.start_run(agent="codex", conversation="octo/repo#12", job_id="42",
                                sandbox_tier=1, limits={...}, base_commit="3f2a9c1...")
    recorder.enforced(run_id, "save_file", args, outcome="ok", duration_ms=3.1)
    recorder.attest(run_id, event)                 # every CLI event, raw line kept
    recorder.declare_gap(run_id, "codex's model calls")
    recorder.attach_egress(run_id, process.egress)  # per-host counts from the proxy
    recorder.finish_run(run_id, "ok", summary={...})

Tiers (`adapters.base.Tier`): `enforced` rows are bridged calls and the bot's own acts (a
halt); `attested` rows are what the CLI said; `unobserved` rows are declared gaps.
Every text stored passes through `redact()` first: no secret value reaches disk.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from adapters.base import Event, Tier
from bot import logs, metrics
from bot.db import Database, connect
from bot.record.redact import redact

# a CLI line at least this long is redacted on a thread (Recorder.attest_async)
OFF_LOOP_RAW = 64 * 1024


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def args_digest(args: Any) -> str:
    """A stable digest of a call's arguments: identifies them without storing them."""
    canonical = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


INTERRUPTED = "interrupted: the worker stopped before the run finished"
_started: dict[str, tuple[str, float]] = {}  # run id -> (agent, monotonic start): the episode histogram

class Recorder:
    def __init__(self, db: Database | Path | str, secrets: Iterable[str] = ()):
        if not isinstance(db, Database):
            db = connect(path=Path(db))
        self.db = db
        self._secrets: set[str] = set()
        self.add_secrets(secrets)

    def add_secrets(self, values: Iterable[str]) -> None:
        self._secrets.update(v for v in values if v)

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    # runs ------------------------------------------------------------------

    def start_run(self, *, agent: str, run_id: str | None = None, job_id: str | None = None,
                  conversation: str | None = None, mode: str = "strict",
                  sandbox_tier: int | None = None, limits: dict | None = None,
                  base_commit: str | None = None) -> str:
        run_id = run_id or uuid.uuid4().hex
        self._insert("runs", {
            "id": run_id, "job_id": job_id, "conversation": conversation, "agent": agent,
            "mode": mode, "started_at": now_iso(), "status": "running",
            "sandbox_tier": sandbox_tier, "limits": self._json(limits or {}),
            "base_commit": base_commit})
        logs.bind_run(run_id)
        _started[run_id] = (agent, time.monotonic())
        return run_id

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set run columns known only later: agent_version, session_id, resumed, sandbox_tier..."""
        row = {k: self._json(v) if isinstance(v, (dict, list)) else self.redact(v) if isinstance(v, str) else v
               for k, v in fields.items()}
        self._update_run(run_id, row)

    def finish_run(self, run_id: str, status: str, summary: dict | None = None) -> None:
        self._update_run(run_id, {"status": status, "finished_at": now_iso(),
                                  "summary": self._json(summary or {})})
        if (started := _started.pop(run_id, None)) is not None:
            agent, at = started
            metrics.EPISODE_SECONDS.labels(agent, status).observe(time.monotonic() - at)

    def end_interrupted(self, job_id: str) -> list[str]:
        """The job's runs still "running" from an attempt whose worker died (killed, or its lease
        taken over): ended as interrupted, now. Returns their ids."""
        rows = self.db.query("select id from runs where job_id = ? and status = 'running'", [job_id])
        for row in rows:
            self.finish_run(row["id"], "interrupted", {"error": INTERRUPTED})
        return [row["id"] for row in rows]

    def attach_egress(self, run_id: str, decisions: Iterable[Any]) -> dict[str, dict]:
        """Per-host counts of the egress proxy's decisions, stored on the run."""
        counts: dict[str, dict] = {}
        for decision in decisions:
            d = decision if isinstance(decision, dict) else decision.as_dict()
            host = counts.setdefault(d["host"], {"allowed": 0, "denied": 0, "bytes_up": 0, "bytes_down": 0})
            host["allowed" if d.get("allowed") else "denied"] += 1
            host["bytes_up"] += int(d.get("bytes_up") or 0)
            host["bytes_down"] += int(d.get("bytes_down") or 0)
        self._update_run(run_id, {"egress": self._json(counts)})
        return counts

    # events ----------------------------------------------------------------

    def record(self, run_id: str, tier: Tier | str, kind: str, *, tool: str | None = None,
               args: Any = None, outcome: str | None = None, duration_ms: float | None = None,
               raw: str | bytes = "", raw_redacted: str | None = None) -> int:
        """Append one event to the run; returns its sequence number. `raw_redacted`: the raw
        text already passed through `redact` (off the event loop, for a long line)."""
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        raw = raw_redacted if raw_redacted is not None else self.redact(raw)
        seq = self._next_seq(run_id)
        self._insert("run_events", {
            "run_id": run_id, "seq": seq, "ts": now_iso(), "tier": Tier(tier).value, "kind": kind,
            "tool": self.redact(tool) if tool else tool, "args_digest": args_digest(args) if args is not None else None,
            "outcome": self.redact(outcome) if outcome else outcome, "duration_ms": duration_ms,
            "raw": raw})
        return seq

    def enforced(self, run_id: str, tool: str, args: Any, *, outcome: str,
                 duration_ms: float, detail: Any = None) -> int:
        """A bridged call: its tool, arguments digest, outcome and duration."""
        raw = self._json(detail) if detail is not None else ""
        return self.record(run_id, Tier.ENFORCED, "tool_call", tool=tool, args=args,
                           outcome=outcome, duration_ms=duration_ms, raw=raw)

    def attest(self, run_id: str, event: Event) -> int:
        """A CLI event, kept as the CLI's own claim with its raw line."""
        outcome = event.error if event.error else None
        return self.record(run_id, Tier.ATTESTED, event.kind.value, tool=event.tool,
                           outcome=outcome, raw=event.raw or event.text)

    async def attest_async(self, run_id: str, event: Event) -> int:
        """`attest`, with a long line's redaction on a thread: looking for every encoding of every
        secret costs seconds per MiB of token-like text, which would hold the event loop (and every
        other thread's webhooks) for that long."""
        raw = event.raw or event.text
        if len(raw) < OFF_LOOP_RAW:
            return self.attest(run_id, event)
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
        clean = await asyncio.to_thread(self.redact, text)
        return self.record(run_id, Tier.ATTESTED, event.kind.value, tool=event.tool,
                           outcome=event.error or None, raw_redacted=clean)

    def declare_gap(self, run_id: str, what: str) -> int:
        """Something the bot cannot see (the CLI's model calls...), named in the record."""
        return self.record(run_id, Tier.UNOBSERVED, "gap", raw=what)

    # reading ---------------------------------------------------------------

    def run(self, run_id: str) -> dict | None:
        """The run with this id, or with this unambiguous id prefix."""
        rows = list(self.db.query("select * from runs where id = ?", [run_id])) or list(
            self.db.query("select * from runs where id like ? limit 2", [f"{run_id}%"]))
        if len(rows) != 1:
            return None
        row = rows[0]
        for column in ("limits", "egress", "summary"):
            row[column] = json.loads(row[column]) if row.get(column) else {}
        return row

    def events(self, run_id: str) -> list[dict]:
        return list(self.db.query("select * from run_events where run_id = ? order by seq", [run_id]))

    def recent(self, limit: int = 20) -> list[dict]:
        return list(self.db.query(
            "select r.*, (select count(*) from run_events e where e.run_id = r.id) as events "
            "from runs r order by started_at desc limit ?", [limit]))

    def unfinished_runs(self, conversation: str, since: str, until: str | None = None) -> list[str]:
        """The runs of `conversation` started in [since, until) and still "running"."""
        rows = self.db.query("select id, started_at from runs where conversation = ? and status = 'running' "
                             "and started_at >= ?", [conversation, since])
        return [row["id"] for row in rows if until is None or row["started_at"] < until]

    def tier_counts(self, run_id: str) -> Counter:
        return Counter({row["tier"]: row["n"] for row in self.db.query(
            "select tier, count(*) as n from run_events where run_id = ? group by tier", [run_id])})

    def _next_seq(self, run_id: str) -> int:
        row = self.db.execute("select coalesce(max(seq), 0) + 1 as seq from run_events "
                              "where run_id = ?", [run_id]).fetchone()
        assert row is not None  # an aggregate always returns one row
        return row["seq"]

    def _insert(self, table: str, row: dict[str, Any]) -> None:
        self.db.execute(f"INSERT INTO {table} ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                        list(row.values()))

    def _update_run(self, run_id: str, row: dict[str, Any]) -> None:
        columns = ", ".join(f"{name} = ?" for name in row)  # names are this module's, never input
        self.db.execute(f"UPDATE runs SET {columns} WHERE id = ?", [*row.values(), run_id])

    def _json(self, value: Any) -> str:
        return self.redact(json.dumps(value, sort_keys=True, default=str))


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
