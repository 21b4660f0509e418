"""Slowing down whoever guesses fire tokens (`POST /automations/...`, bot/web/fire_route.py): after
MAX_FAILURES wrong tokens from one client address within WINDOW_S seconds of its first, every
request from it is answered 429 until that window has passed, before any token is looked at. A
token is 32 random bytes, so this is not what keeps it secret; it keeps a guesser from costing the
service a token read per request, and it makes a guesser visible in the log.

    limiter = FailureLimiter.of(request.app.state)
    if (wait := limiter.blocked(client)) is not None: -> 429 with Retry-After: wait
    limiter.failed(client)   # a wrong, revoked or missing token: the same call for each

The count is the database's (`fire_failures`, migration 19), so every replica counts one address's
failures together. One row per address, keyed by a digest of it (no address is stored as it came),
holding its failures since its window began; each failure is one atomic upsert, so replicas racing
lose no count. A row whose window has passed is deleted, and at most MAX_CLIENTS rows are kept (the
oldest windows go first). Each statement stands alone: no transaction holds one row while it waits
for another. Behind a reverse proxy every caller has the proxy's address: a guesser then slows
every caller down for the window, which is the price of not trusting a forwarded header anyone can
write.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import Any

from bot.db import Database

MAX_FAILURES = 10
WINDOW_S = 60.0
MAX_CLIENTS = 4096

_FAILED = ("INSERT INTO fire_failures (client, failures, since) VALUES (?, 1, ?) ON CONFLICT (client) DO UPDATE SET "
           "failures = CASE WHEN fire_failures.since <= ? THEN 1 ELSE fire_failures.failures + 1 END, "
           "since = CASE WHEN fire_failures.since <= ? THEN excluded.since ELSE fire_failures.since END")
_BOUND = ("DELETE FROM fire_failures WHERE since < "
          "(SELECT since FROM fire_failures ORDER BY since DESC LIMIT 1 OFFSET ?)")


class FailureLimiter:
    def __init__(self, db: Database, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S,
                 max_clients: int = MAX_CLIENTS, clock: Callable[[], float] = time.time):
        self.db, self.max_failures, self.window_s, self.max_clients = db, max_failures, window_s, max_clients
        self.clock = clock  # the wall clock: replicas on several machines share the rows

    @classmethod
    def of(cls, state: Any) -> FailureLimiter:
        limiter = getattr(state, "fire_limiter", None)
        if limiter is None or limiter.db is not state.db:
            limiter = state.fire_limiter = cls(state.db)
        return limiter

    def blocked(self, client: str) -> int | None:
        """Seconds to wait (at least 1) when `client` used up its failures in its window, else None."""
        now = self.clock()
        rows = self.db.query("SELECT failures, since FROM fire_failures WHERE client = ?", [_key(client)])
        if not rows or rows[0]["failures"] < self.max_failures or rows[0]["since"] <= now - self.window_s:
            return None
        return max(1, int(float(rows[0]["since"]) + self.window_s - now) + 1)

    def failed(self, client: str) -> None:
        now = self.clock()
        expired = now - self.window_s
        self.db.execute(_FAILED, [_key(client), now, expired, expired])
        self.db.execute("DELETE FROM fire_failures WHERE since <= ?", [expired])
        self.db.execute(_BOUND, [self.max_clients - 1])

    def remembered(self) -> int:
        """How many addresses the table holds now."""
        return int(self.db.query("SELECT COUNT(*) AS n FROM fire_failures")[0]["n"])


def _key(client: str) -> str:
    return hashlib.sha256(client.encode("utf-8", "replace")).hexdigest()[:32]
