"""The most a call can cost, read from the request as it leaves for the provider: what admission
holds against the budgets until the call is answered (bot/relay/budgets.py).

Every byte of the body counts as an input token (a token is at least one byte). The output is the
request's own output limit, else DEFAULT_MAX_OUTPUT, times the answers it asks for. Each API's
limit and count are read in every spelling it accepts (its record's `hold`, bot/relay/wire_apis/),
and the largest is held: a JSON that takes `generationConfig` and `generation_config`,
`candidateCount` and `candidate_count`, and a number written as a string ("8"), read in one spelling
only, could be held at a quarter of what the provider runs. An API whose record declares no hold
holds the default output, one answer. A value present but not a number (a boolean, a word,
a list, NaN) is refused: the relay cannot say what the provider would make of it.
"""
from __future__ import annotations

import math
from typing import Any

import orjson

from bot.errors import BotError
from bot.relay import wire_api
from bot.relay.call_usage import CallUsage
from bot.relay.wire_api import NOWHERE, Hold

# no request naming its output limit may produce more than this; at least every current model's
# documented maximum output (GPT-5: 128,000; Claude Opus: 128,000; Gemini 2.5: 65,536)
DEFAULT_MAX_OUTPUT = 128_000
LIMIT = 10_000_000  # a value read past this is held at this: a price times it stays a finite number
_NO_HOLD = Hold(NOWHERE)


class Unreadable(BotError, ValueError):
    """A limit or count the relay cannot read as a number; the message names it."""


def ceiling(api: str, body: bytes, metered: bool = True) -> CallUsage:
    """The most the call whose body (as it leaves) is `body` can cost, in tokens."""
    if not metered:
        return CallUsage()
    return ceiling_of(api, orjson.loads(body), len(body))


def ceiling_of(api: str, request: Any, size: int) -> CallUsage:
    """`ceiling` of a body of `size` bytes already parsed as `request` (the body policy's parse, of which
    the body is the serialisation: a second parse would read the same)."""
    request = request if isinstance(request, dict) else {}
    hold = wire_api.get(api).hold or _NO_HOLD
    output = _largest(request, *hold.limit) or DEFAULT_MAX_OUTPUT
    answers = _largest(request, *hold.count) or 1
    return CallUsage(input_tokens=size, output_tokens=min(output, LIMIT) * min(answers, LIMIT))


def _largest(request: dict[str, Any], containers: tuple[str | None, ...], names: tuple[str, ...]) -> int | None:
    found = [number for where in containers for holder in [request if where is None else request.get(where)]
             if isinstance(holder, dict) for name in names if name in holder
             for number in [_number(name, holder[name])] if number is not None]
    return max(found, default=None)


def _number(name: str, value: Any) -> int | None:
    """A positive whole number, or None for a value that asks for nothing (absent, null, zero or
    less: the provider's default); Unreadable for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Unreadable(f"the model relay cannot read {name} ({type(value).__name__}); send a whole number")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise Unreadable(f"the model relay cannot read {name} ({str(value)[:40]!r}); send a whole number") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise Unreadable(f"the model relay cannot read {name} ({str(value)[:40]!r}); send a whole number")
    return min(math.ceil(number), LIMIT) if number >= 1 else None
