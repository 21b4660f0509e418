"""The bot's one retry policy: exponential backoff with a cap, a fixed number of attempts, and a
predicate saying which failures are worth another try. Built on tenacity.

Every wait goes through `sleep`, one module attribute, so a test replaces it once and no retry
in the suite waits for real (the attempts and the delays asked for are still what they would be).
"""
from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential

from bot import metrics

log = logging.getLogger(__name__)
T = TypeVar("T")


async def sleep(seconds: float) -> None:
    """The one place a retry waits (tests replace it)."""
    await asyncio.sleep(seconds)


@dataclass(frozen=True)
class Policy:
    attempts: int
    first_delay_s: float
    max_delay_s: float = 120.0


# GitHub writes that must not be lost to a blip: a few quick tries
GITHUB_WRITE = Policy(attempts=4, first_delay_s=1.0)
# the terminal answer: after its own quick tries, minutes of patience through an outage
FINAL_ANSWER = Policy(attempts=7, first_delay_s=5.0, max_delay_s=120.0)


async def retrying(call: Callable[[], Awaitable[T]], policy: Policy, *, worth_retrying: Callable[[BaseException], bool],
                   what: str) -> T:
    """Await `call()`; a failure `worth_retrying` is tried again per `policy`, others raise at once."""

    def log_retry(state: RetryCallState) -> None:
        failure = state.outcome.exception() if state.outcome else None
        metrics.RETRIES.labels(what).inc()
        log.warning("%s failed (%s: %s); attempt %d of %d in %.1f s", what, type(failure).__name__, failure,
                    state.attempt_number + 1, policy.attempts, state.upcoming_sleep)

    controller = AsyncRetrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait_exponential(multiplier=policy.first_delay_s, exp_base=2, max=policy.max_delay_s),
        retry=retry_if_exception(worth_retrying), before_sleep=log_retry, sleep=_sleep, reraise=True)
    async for attempt in controller:
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity re-raises the last failure")


async def _sleep(seconds: float) -> None:
    await sleep(seconds)  # looked up at call time, so a test's replacement is used


def retry_after_s(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """The wait a server asked for: `retry-after-ms`, else `Retry-After` in seconds or as an HTTP
    date (never negative); None when it asked for none the bot can read. Header names in any case."""
    lowered = {name.lower(): value for name, value in headers.items()}
    millis = _seconds(lowered.get("retry-after-ms", ""))
    if millis is not None:
        return millis / 1000
    value = lowered.get("retry-after", "").strip()
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _seconds(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return max(0.0, number) if math.isfinite(number) else None
