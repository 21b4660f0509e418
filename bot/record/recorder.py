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

Events are queued and written in batches by a thread (bot/record/event_log.py): `record` returns
the event's sequence number at once, without a database statement. What reads events here
(`events`, `recent`, `tier_counts`) waits for the ones recorded before; `flush(run_id)` and
`await flushed(run_id)` make them durable for whoever acts on them (the bridge answers a call
only then), and `finish_run` does before the run is marked finished.
"""
from __future__ import annotations

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
from bot.record.event_log import event_log
from bot.record.secrets import Secrets


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def args_digest(args: Any) -> str:
    """A stable digest of a call's arguments: identifies them without storing them."""
    canonical = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


INTERRUPTED = "interrupted: the worker stopped before the run finished"
_started: dict[str, tuple[str, float]] = {}  # run id -> (agent, monotonic start): the episode histogram

class Recorder:
    def __init__(self, db: Database | Path | str, secrets: Secrets | Iterable[str] = ()):
        """`secrets` given as a `Secrets` is held, not copied: a value the job adds later is masked
        in every event recorded after it."""
        if not isinstance(db, Database):
            db = connect(path=Path(db))
        self.db = db
        self.log = event_log(db)
        self.secrets = secrets if isinstance(secrets, Secrets) else Secrets(secrets)

    def add_secrets(self, values: Iterable[str]) -> None:
        self.secrets.extend(values)

    def redact(self, text: str) -> str:
        return self.secrets.mask(text)

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
        self.log.opened(run_id)
        logs.bind_run(run_id)
        _started[run_id] = (agent, time.monotonic())
        return run_id

    def update_run(self, run_id: str, **fields: Any) -> None:
        """Set run columns known only later: agent_version, session_id, resumed, sandbox_tier..."""
        row = {k: self._json(v) if isinstance(v, (dict, list)) else self.redact(v) if isinstance(v, str) else v
               for k, v in fields.items()}
        self._update_run(run_id, row)

    def finish_run(self, run_id: str, status: str, summary: dict | None = None) -> None:
        """The run's status, once every event recorded for it is stored (`await flushed(run_id)`
        first keeps the wait off the event loop)."""
        self.flush(run_id)
        self._update_run(run_id, {"status": status, "finished_at": now_iso(),
                                  "summary": self._json(summary or {})})
        self.log.forget(run_id)
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
               raw: str | bytes = "") -> int:
        """Queue one event of the run; returns its sequence number. Its texts are redacted
        (as `redact` does) and stored by the writer thread, in order: a long line's redaction,
        seconds per MiB of token-like text, never holds the event loop."""
        digest = args_digest(args) if args is not None else None
        # stamped with a float here, its text (as now_iso's) made by the writer: off the event loop
        return self.log.append(self.db, run_id, (time.time(), Tier(tier).value, kind, tool, digest, outcome,
                                                 duration_ms, raw), self.secrets.snapshot(), len(raw))

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
        """`attest`, for a CLI's reader on the event loop: queued like any event, and then, if the
        writer is far behind (a CLI printing without end), the reader waits for it to catch up."""
        seq = self.attest(run_id, event)
        await self.log.room()
        return seq

    def declare_gap(self, run_id: str, what: str) -> int:
        """Something the bot cannot see (the CLI's model calls...), named in the record."""
        return self.record(run_id, Tier.UNOBSERVED, "gap", raw=what)

    # durability --------------------------------------------------------------

    def flush(self, run_id: str | None = None) -> None:
        """Return once every event recorded so far (of `run_id`, or of every run) is stored."""
        self.log.flush(run_id)

    async def flushed(self, run_id: str | None = None) -> None:
        """`flush` without holding the event loop."""
        await self.log.flushed(run_id)

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
        self.flush(run_id)
        return list(self.db.query("select * from run_events where run_id = ? order by seq", [run_id]))

    def recent(self, limit: int = 20) -> list[dict]:
        self.flush()
        return list(self.db.query(
            "select r.*, (select count(*) from run_events e where e.run_id = r.id) as events "
            "from runs r order by started_at desc limit ?", [limit]))

    def unfinished_runs(self, conversation: str, since: str, until: str | None = None) -> list[str]:
        """The runs of `conversation` started in [since, until) and still "running"."""
        rows = self.db.query("select id, started_at from runs where conversation = ? and status = 'running' "
                             "and started_at >= ?", [conversation, since])
        return [row["id"] for row in rows if until is None or row["started_at"] < until]

    def tier_counts(self, run_id: str) -> Counter:
        self.flush(run_id)
        return Counter({row["tier"]: row["n"] for row in self.db.query(
            "select tier, count(*) as n from run_events where run_id = ? group by tier", [run_id])})

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
