"""Wrong fire tokens from one address: after ten within a minute, that address is answered 429
until the minute has passed; other addresses are not slowed (bot/web/fire_limit.py)."""
from __future__ import annotations

from bot.web.fire_limit import FailureLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_an_address_is_blocked_after_its_failures_until_the_window_passes():
    clock = Clock()
    limiter = FailureLimiter(max_failures=3, window_s=60, clock=clock)
    for _ in range(3):
        assert limiter.blocked("a") is None
        limiter.failed("a")
    assert limiter.blocked("a") == 61 and limiter.blocked("b") is None
    clock.now += 60.5
    assert limiter.blocked("a") is None


def test_old_failures_do_not_count():
    clock = Clock()
    limiter = FailureLimiter(max_failures=2, window_s=60, clock=clock)
    limiter.failed("a")
    clock.now += 61
    limiter.failed("a")
    assert limiter.blocked("a") is None


def test_at_most_its_number_of_addresses_is_remembered():
    limiter = FailureLimiter(max_failures=1, window_s=60, max_clients=2, clock=Clock())
    for address in ("a", "b", "c"):
        limiter.failed(address)
    assert limiter.blocked("a") is None and limiter.blocked("c") is not None
    assert len(limiter._failures) == 2
