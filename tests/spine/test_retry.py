"""The one retry policy: which failures are tried again, how often, and how long it waits."""
from __future__ import annotations

import pytest

from bot import retry

QUICK = retry.Policy(attempts=4, first_delay_s=1.0, max_delay_s=3.0)


class Blip(Exception):
    pass


def failing(times: int, error: type[Exception] = Blip):
    calls = []

    async def call():
        calls.append(1)
        if len(calls) <= times:
            raise error("no")
        return "done"
    return call, calls


async def test_a_failure_worth_retrying_is_tried_again_until_it_succeeds():
    call, calls = failing(2)
    assert await retry.retrying(call, QUICK, worth_retrying=lambda e: isinstance(e, Blip), what="x") == "done"
    assert len(calls) == 3


async def test_waits_double_and_stop_at_the_cap(retry_waits):
    call, _ = failing(3)
    await retry.retrying(call, QUICK, worth_retrying=lambda e: True, what="x")
    assert retry_waits == [1.0, 2.0, 3.0]


async def test_the_last_failure_is_raised_after_the_last_attempt():
    call, calls = failing(10)
    with pytest.raises(Blip):
        await retry.retrying(call, QUICK, worth_retrying=lambda e: True, what="x")
    assert len(calls) == QUICK.attempts


async def test_a_failure_not_worth_retrying_is_raised_at_once(retry_waits):
    call, calls = failing(1, ValueError)
    with pytest.raises(ValueError):
        await retry.retrying(call, QUICK, worth_retrying=lambda e: isinstance(e, Blip), what="x")
    assert len(calls) == 1 and retry_waits == []
