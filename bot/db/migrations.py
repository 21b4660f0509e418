"""The schema, as numbered migrations applied in order, for both backends.

Every process runs `migrate(db)` when it connects (and an operator may run `bot migrate`): the
first one to start applies what is missing while the others wait on the lock (PostgreSQL: an
advisory lock held by the migration's transaction; SQLite: BEGIN IMMEDIATE), then finds nothing
left to do. DDL is transactional in both, so a migration is applied whole or not at all.

Version 1 is the schema the modules used to create for themselves (`IF NOT EXISTS`, so an
existing SQLite data dir adopts it unchanged). `{serial}` and `{blob}` are the dialect's
spelling of an auto-increment key and of bytes (bot/db/dialect.py).
"""
from __future__ import annotations

import time

from bot.db.database import Database

MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (1, "the spine, the record, secrets, settings sessions and spend", (
        """CREATE TABLE IF NOT EXISTS jobs (
            id {serial}, delivery_id TEXT, kind TEXT NOT NULL,
            conversation TEXT NOT NULL, spec TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'queued',
            attempts INTEGER NOT NULL DEFAULT 0, lease_owner TEXT, lease_expires DOUBLE PRECISION,
            tracking_comment_id BIGINT, cancel_requested INTEGER NOT NULL DEFAULT 0,
            created_at DOUBLE PRECISION NOT NULL, started_at DOUBLE PRECISION,
            finished_at DOUBLE PRECISION, error TEXT, run_id TEXT)""",
        "CREATE INDEX IF NOT EXISTS jobs_by_delivery ON jobs(delivery_id)",
        "CREATE INDEX IF NOT EXISTS jobs_open ON jobs(status, conversation, id)",
        """CREATE TABLE IF NOT EXISTS conversations (
            key TEXT PRIMARY KEY, slug TEXT UNIQUE, repo TEXT, number BIGINT,
            created_at DOUBLE PRECISION, last_active_at DOUBLE PRECISION)""",
        """CREATE TABLE IF NOT EXISTS sessions (
            conversation TEXT NOT NULL, agent TEXT NOT NULL, session_id TEXT,
            created_at DOUBLE PRECISION, last_used_at DOUBLE PRECISION,
            turns INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (conversation, agent))""",
        """CREATE TABLE IF NOT EXISTS notices (
            conversation TEXT NOT NULL, kind TEXT NOT NULL, created_at DOUBLE PRECISION,
            PRIMARY KEY (conversation, kind))""",
        """CREATE TABLE IF NOT EXISTS secrets (
            scope TEXT NOT NULL, name TEXT NOT NULL, sealed {blob}, fingerprint TEXT,
            updated_at TEXT, updated_by TEXT, PRIMARY KEY (scope, name))""",
        """CREATE TABLE IF NOT EXISTS secret_audit (
            id {serial}, at TEXT, actor TEXT, action TEXT, scope TEXT, name TEXT, fingerprint TEXT)""",
        """CREATE TABLE IF NOT EXISTS settings_sessions (
            sid_hash TEXT PRIMARY KEY, login TEXT, user_id BIGINT, token_sealed {blob},
            created_at BIGINT, expires_at BIGINT)""",
        """CREATE TABLE IF NOT EXISTS runs (
            id TEXT PRIMARY KEY, job_id TEXT, conversation TEXT, agent TEXT, agent_version TEXT,
            session_id TEXT, resumed INTEGER, mode TEXT, started_at TEXT, finished_at TEXT,
            status TEXT, sandbox_tier INTEGER, limits TEXT, base_commit TEXT, egress TEXT, summary TEXT)""",
        "CREATE INDEX IF NOT EXISTS idx_runs_started_at ON runs(started_at)",
        """CREATE TABLE IF NOT EXISTS run_events (
            run_id TEXT NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, ts TEXT, tier TEXT,
            kind TEXT, tool TEXT, args_digest TEXT, outcome TEXT, duration_ms DOUBLE PRECISION,
            raw TEXT, PRIMARY KEY (run_id, seq))""",
        """CREATE TABLE IF NOT EXISTS model_spend (
            run_id TEXT, ts TEXT, conversation TEXT, requester TEXT, installation TEXT,
            tokens BIGINT, usd DOUBLE PRECISION)""",
        "CREATE INDEX IF NOT EXISTS idx_model_spend_conversation_ts ON model_spend(conversation, ts)",
        "CREATE INDEX IF NOT EXISTS idx_model_spend_requester_ts ON model_spend(requester, ts)",
        "CREATE INDEX IF NOT EXISTS idx_model_spend_installation_ts ON model_spend(installation, ts)",
    )),
    (2, "scale-out: worker heartbeats and the packed CLI homes that follow a thread", (
        """CREATE TABLE IF NOT EXISTS workers (
            owner TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER, version TEXT,
            running INTEGER NOT NULL DEFAULT 0, capacity INTEGER NOT NULL DEFAULT 0,
            started_at DOUBLE PRECISION, seen_at DOUBLE PRECISION NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS session_homes (
            conversation TEXT NOT NULL, agent TEXT NOT NULL, version INTEGER NOT NULL,
            sealed {blob} NOT NULL, size BIGINT NOT NULL, packed_by TEXT,
            updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (conversation, agent))""",
    )),
    (3, "which stored key each run used (settings pages: a key's runs, spend and last use)", (
        """CREATE TABLE IF NOT EXISTS credential_use (
            run_id TEXT PRIMARY KEY, at TEXT, scope TEXT, name TEXT, fingerprint TEXT)""",
    )),
    (4, "a job names the object that triggered it (a replayed body under a new delivery id is a duplicate) "
        "and who stopped it", (
        "ALTER TABLE jobs ADD COLUMN trigger_key TEXT",
        "CREATE INDEX IF NOT EXISTS jobs_by_trigger ON jobs(trigger_key)",
        "ALTER TABLE jobs ADD COLUMN stopped_by TEXT",
    )),
    (5, "a settings sign-in's OAuth state is used once", (
        "CREATE TABLE IF NOT EXISTS oauth_states (state_hash TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
    )),
    (6, "incremental reviews: per pull request and agent the commit last reviewed, and each finding posted "
        "(its comment, where, severity, fingerprint, and whether it is open, fixed or declined)", (
        """CREATE TABLE IF NOT EXISTS reviewed_commits (
            repo TEXT NOT NULL, number BIGINT NOT NULL, agent TEXT NOT NULL, commit_sha TEXT NOT NULL,
            review_id BIGINT, reviewed_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, number, agent))""",
        """CREATE TABLE IF NOT EXISTS review_findings (
            id {serial}, repo TEXT NOT NULL, number BIGINT NOT NULL, agent TEXT NOT NULL,
            review_id BIGINT, comment_id BIGINT, commit_sha TEXT NOT NULL, path TEXT NOT NULL,
            line INTEGER NOT NULL, start_line INTEGER, side TEXT NOT NULL, severity TEXT,
            fingerprint TEXT NOT NULL, title TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'open',
            state_detail TEXT, created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION)""",
        "CREATE INDEX IF NOT EXISTS review_findings_by_pull ON review_findings(repo, number, state)",
    )),
    (7, "one live job per trigger, enforced by the database (two intake replicas racing on one redelivered "
        "comment); a failed job's trigger may be queued again, so failed rows are outside the index", (
        # jobs an older database already holds twice: the oldest keeps the key, the later ones are
        # marked with their id so the index can be built
        """UPDATE jobs SET trigger_key = trigger_key || ' (duplicate, job ' || CAST(id AS TEXT) || ')'
            WHERE trigger_key IS NOT NULL AND status != 'failed' AND EXISTS (
                SELECT 1 FROM jobs AS older WHERE older.trigger_key = jobs.trigger_key
                AND older.status != 'failed' AND older.id < jobs.id)""",
        "CREATE UNIQUE INDEX IF NOT EXISTS jobs_one_live_per_trigger ON jobs(trigger_key) "
        "WHERE trigger_key IS NOT NULL AND status != 'failed'",
    )),
    (8, "who may change a review: a declined finding says how it was declined (a reply or a resolution, so "
        "unresolving undoes only the latter); pushes coalesce into one waiting review per thread and requester, "
        "enforced by the database (two intake replicas at one instant), and a push merged into it is "
        "recorded so its redelivery does nothing", (
        "ALTER TABLE review_findings ADD COLUMN declined_via TEXT",
        "ALTER TABLE jobs ADD COLUMN coalesce_key TEXT",
        "CREATE UNIQUE INDEX IF NOT EXISTS jobs_one_waiting_push_review ON jobs(coalesce_key) "
        "WHERE coalesce_key IS NOT NULL AND status = 'queued' AND started_at IS NULL AND cancel_requested = 0",
        """CREATE TABLE IF NOT EXISTS merged_pushes (
            delivery_id TEXT PRIMARY KEY, trigger_key TEXT, job_id BIGINT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS merged_pushes_by_trigger ON merged_pushes(trigger_key)",
    )),
    (9, "learned review rules: a kind of finding writers declined on two pull requests, proposed to the "
        "repository's maintainers (candidate), approved (applied to every later review), or discarded; and "
        "the writers' reactions to the bot's review comments", (
        """CREATE TABLE IF NOT EXISTS learned_rules (
            id {serial}, repo TEXT NOT NULL, folder TEXT NOT NULL, finding TEXT NOT NULL,
            wording TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'candidate', evidence TEXT NOT NULL,
            created_at DOUBLE PRECISION NOT NULL, decided_by TEXT, decided_at DOUBLE PRECISION,
            pull_request TEXT)""",
        "CREATE UNIQUE INDEX IF NOT EXISTS learned_rules_one_per_kind ON learned_rules(repo, folder, finding)",
        """CREATE TABLE IF NOT EXISTS review_reactions (
            repo TEXT NOT NULL, comment_id BIGINT NOT NULL, login TEXT NOT NULL, content TEXT NOT NULL,
            agent TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, comment_id, login, content, agent))""",
    )),
    (10, "automations: each (repository, automation, slot) runs once whatever the number of replicas (a slot "
         "is an event's delivery id or a schedule's slot time); when each schedule was first seen (a slot "
         "before it waits for the next); the default branch's .github/bot.yml last read, for the schedules", (
        """CREATE TABLE IF NOT EXISTS automation_runs (
            repo TEXT NOT NULL, automation TEXT NOT NULL, slot TEXT NOT NULL, job_id BIGINT,
            created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, automation, slot))""",
        """CREATE TABLE IF NOT EXISTS automation_schedules (
            repo TEXT NOT NULL, automation TEXT NOT NULL, crons TEXT NOT NULL,
            seen_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, automation))""",
        """CREATE TABLE IF NOT EXISTS automation_configs (
            repo TEXT PRIMARY KEY, repo_id BIGINT, installation_id BIGINT, text TEXT NOT NULL,
            source TEXT, read_at DOUBLE PRECISION NOT NULL)""",
    )),
    (11, "scheduled automations: the one issue per (repository, automation) the bot opened, where every "
         "scheduled run of it answers (replaced when closed or deleted)", (
        """CREATE TABLE IF NOT EXISTS automation_issues (
            repo TEXT NOT NULL, automation TEXT NOT NULL, number BIGINT NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, automation))""",
    )),
    (12, "an approved learned rule's pull request (which adds it to REVIEW.md): its number beside its URL, "
         "or why opening it failed, shown on the settings page with a retry", (
        "ALTER TABLE learned_rules ADD COLUMN pull_request_number BIGINT",
        "ALTER TABLE learned_rules ADD COLUMN pull_request_failure TEXT",
    )),
    (13, "`@bot pause`: the threads (repository and issue or pull request number) where no automation and "
         "no push-triggered review runs until `@bot resume`, with who paused them and when", (
        """CREATE TABLE IF NOT EXISTS thread_pauses (
            repo TEXT NOT NULL, number BIGINT NOT NULL, paused_by TEXT NOT NULL,
            paused_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, number))""",
    )),
    (14, "a learned rule's pull request as GitHub last said it was (open, merged or closed unmerged), and the "
         "REVIEW.md path and line it wrote, so an edited rule updates its pull request or opens a new one", (
        "ALTER TABLE learned_rules ADD COLUMN pull_request_state TEXT",
        "ALTER TABLE learned_rules ADD COLUMN pull_request_path TEXT",
        "ALTER TABLE learned_rules ADD COLUMN pull_request_line TEXT",
    )),
    (15, "automations: what each slot row is (a run, an autofix attempt counted, the bot's push, a run "
         "refused or skipped with why), the account that caused it (per-account caps), and indexes for "
         "the caps' counts", (
        "ALTER TABLE automation_runs ADD COLUMN kind TEXT",
        "ALTER TABLE automation_runs ADD COLUMN account TEXT",
        "ALTER TABLE automation_runs ADD COLUMN outcome TEXT",
        "CREATE INDEX IF NOT EXISTS automation_runs_by_time ON automation_runs(repo, automation, created_at)",
        "CREATE INDEX IF NOT EXISTS automation_runs_by_account ON automation_runs(account, created_at)",
    )),
    (16, "automations fired over HTTP: one token per (repository, automation), stored only as its SHA-256 "
         "digest, with who made it and the installation a fired run acts through", (
        """CREATE TABLE IF NOT EXISTS automation_tokens (
            repo TEXT NOT NULL, automation TEXT NOT NULL, digest TEXT NOT NULL, repo_id BIGINT,
            installation_id BIGINT, created_by TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (repo, automation))""",
    )),
    (17, "automations' money: each priced call names the automation it was for (its `max_usd_per_day`, "
         "summed per UTC day at the relay and at the claim), and a job's runs are found by job (each run's "
         "cost on the settings page)", (
        "ALTER TABLE model_spend ADD COLUMN automation TEXT",
        "CREATE INDEX IF NOT EXISTS idx_model_spend_automation_ts ON model_spend(automation, ts)",
        "CREATE INDEX IF NOT EXISTS idx_runs_job_id ON runs(job_id)",
    )),
    (18, "automations: each commit whose .github/bot.yml was refused (invalid: the last valid file stays in "
         "force), with the line and a short, escaped problem, and the one reply the bot posted on it", (
        """CREATE TABLE IF NOT EXISTS automation_config_refusals (
            repo TEXT NOT NULL, commit_sha TEXT NOT NULL, line BIGINT, problem TEXT NOT NULL, job_id BIGINT,
            comment_id BIGINT, created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (repo, commit_sha))""",
    )),
    (19, "the fire route's wrong tokens, counted per client address across every replica: one row per "
         "address with its failures since the row's window began (a row expires with its window, and "
         "the table is held to a bound)", (
        """CREATE TABLE IF NOT EXISTS fire_failures (
            client TEXT PRIMARY KEY, failures INTEGER NOT NULL, since DOUBLE PRECISION NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS fire_failures_by_time ON fire_failures(since)",
    )),
    (20, "jobs_by_trigger goes: the partial unique jobs_one_live_per_trigger serves every lookup of a live job "
         "by its trigger on both backends, and each index on jobs costs every delivery's insert a page written", (
        "DROP INDEX IF EXISTS jobs_by_trigger",
    )),
    (21, "the delivery id is indexed for jobs without a trigger only (a schedule's slot, an automation's run): "
         "a job about an object is found by its trigger, which one delivery id's signed body always names; "
         "the random id cost every delivery's insert a page of its own, half the pages it wrote", (
        "CREATE INDEX IF NOT EXISTS jobs_untriggered_by_delivery ON jobs(delivery_id) WHERE trigger_key IS NULL",
        "DROP INDEX IF EXISTS jobs_by_delivery",
    )),
)

LATEST = MIGRATIONS[-1][0]
# every table, in an order that respects references (for copying a database)
TABLES = ("jobs", "conversations", "sessions", "notices", "secrets", "secret_audit", "settings_sessions",
          "runs", "run_events", "model_spend", "workers", "session_homes", "credential_use", "oauth_states",
          "reviewed_commits", "review_findings", "merged_pushes", "learned_rules", "review_reactions",
          "automation_runs", "automation_schedules", "automation_configs", "automation_issues",
          "thread_pauses", "automation_tokens", "automation_config_refusals", "fire_failures")
SERIAL_KEYS = {"jobs": "id", "secret_audit": "id", "review_findings": "id", "learned_rules": "id"}

_VERSION_TABLE = ("CREATE TABLE IF NOT EXISTS schema_migrations ("
                  "version INTEGER PRIMARY KEY, description TEXT, applied_at DOUBLE PRECISION)")


def version(db: Database) -> int:
    """The schema version of the database (0: never migrated)."""
    if "schema_migrations" not in db.table_names():
        return 0
    return int(db.query("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations")[0]["v"])


def migrate(db: Database) -> list[int]:
    """Apply the missing migrations under the migration lock; returns the versions applied here."""
    if "schema_migrations" in db.table_names() and _applied(db) >= {number for number, _, _ in MIGRATIONS}:
        return []  # the common case, without taking the write lock (a gap below the latest is applied too)
    with db.transaction():
        for statement in db.dialect.migration_lock():
            db.execute(statement)
        db.execute(_VERSION_TABLE)
        done = _applied(db)
        applied = []
        for number, description, statements in MIGRATIONS:
            if number in done:
                continue
            for statement in statements:
                db.execute(db.dialect.ddl(statement))
            db.execute("INSERT INTO schema_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                       [number, description, time.time()])
            applied.append(number)
        return applied


def _applied(db: Database) -> set[int]:
    return {int(row["version"]) for row in db.query("SELECT version FROM schema_migrations")}
