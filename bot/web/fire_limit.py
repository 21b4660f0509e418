"""Slowing down whoever guesses fire tokens (`POST /automations/...`, bot/web/fire_route.py): after
MAX_FAILURES wrong tokens from one client address within WINDOW_S seconds, every request from it is
answered 429 until the window has passed, before any token is looked at. A token is 32 random bytes,
so this is not what keeps it secret; it keeps a guesser from costing the service a database read
per request, and it makes a guesser visible in the log.

    limiter = FailureLimiter.of(request.app.state)
    if (wait := limiter.blocked(client)) is not None: -> 429 with Retry-After: wait
    limiter.failed(client)   # a wrong token

One process's count (each replica counts its own). Behind a reverse proxy every caller has the
proxy's address: a guesser then slows every caller down for the window, which is the price of not
trusting a forwarded header anyone can write. At most MAX_CLIENTS addresses are remembered; the
oldest goes first.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

MAX_FAILURES = 10
WINDOW_S = 60.0
MAX_CLIENTS = 4096


class FailureLimiter:
    def __init__(self, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S,
                 max_clients: int = MAX_CLIENTS, clock: Callable[[], float] = time.monotonic):
        self.max_failures, self.window_s, self.max_clients, self.clock = max_failures, window_s, max_clients, clock
        self._failures: OrderedDict[str, list[float]] = OrderedDict()

    @classmethod
    def of(cls, state: Any) -> FailureLimiter:
        limiter = getattr(state, "fire_limiter", None)
        if limiter is None:
            limiter = state.fire_limiter = cls()
        return limiter

    def blocked(self, client: str) -> int | None:
        """Seconds to wait (at least 1) when `client` used up its failures, else None."""
        recent = self._recent(client)
        if len(recent) < self.max_failures:
            return None
        return max(1, int(recent[0] + self.window_s - self.clock()) + 1)

    def failed(self, client: str) -> None:
        recent = self._recent(client)
        recent.append(self.clock())
        self._failures[client] = recent[-self.max_failures:]
        self._failures.move_to_end(client)
        while len(self._failures) > self.max_clients:
            self._failures.popitem(last=False)

    def _recent(self, client: str) -> list[float]:
        since = self.clock() - self.window_s
        return [at for at in self._failures.get(client, ()) if at > since]
