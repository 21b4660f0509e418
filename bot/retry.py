"""The bot's one retry policy: exponential backoff with a cap, a fixed number of attempts, and a
predicate saying which failures are worth another try. Built on tenacity.

Every wait goes through `sleep`, one module attribute, so a test replaces it once and no retry
in the suite waits for real (the attempts and the delays asked for are still what they would be).
"""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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
