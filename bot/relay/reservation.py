"""The most a call can cost, read from the request as it leaves for the provider: what admission
holds against the budgets until the call is answered (bot/relay/budgets.py).

Every byte of the body counts as an input token (a token is at least one byte). The output is the
request's own output limit, else DEFAULT_MAX_OUTPUT, times the answers it asks for. Each API's
limit and count are read in every spelling it accepts (`SPELLINGS`), and the largest is held:
Gemini's JSON takes `generationConfig` and `generation_config`, `candidateCount` and
`candidate_count`, and a number written as a string ("8"), so a hold read from one spelling only
could be a quarter of what the provider runs. A value present but not a number (a boolean, a word,
a list, NaN) is refused: the relay cannot say what the provider would make of it.
"""
from __future__ import annotations

import math
from typing import Any

import orjson

from bot.errors import BotError
from bot.relay.usage import CallUsage

# no request naming its output limit may produce more than this; at least every current model's
# documented maximum output (GPT-5: 128,000; Claude Opus: 128,000; Gemini 2.5: 65,536)
DEFAULT_MAX_OUTPUT = 128_000
LIMIT = 10_000_000  # a value read past this is held at this: a price times it stays a finite number
_TOP = (None,)
_GEMINI_CONFIG = ("generationConfig", "generation_config")
# api -> (where the output limit may be written, where the answer count may be); a place is
# (the containers it may sit in, None for the top level; the names it may have)
SPELLINGS: dict[str, tuple[tuple[tuple[Any, ...], tuple[str, ...]], tuple[tuple[Any, ...], tuple[str, ...]]]] = {
    "anthropic": ((_TOP, ("max_tokens",)), ((), ())),
    "chat": ((_TOP, ("max_completion_tokens", "max_tokens", "max_output_tokens")), (_TOP, ("n",))),
    "responses": ((_TOP, ("max_output_tokens", "max_completion_tokens", "max_tokens")), ((), ())),
    "gemini": ((_GEMINI_CONFIG, ("maxOutputTokens", "max_output_tokens")),
               (_GEMINI_CONFIG, ("candidateCount", "candidate_count"))),
}


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
    limits, counts = SPELLINGS.get(api, ((_TOP, ()), ((), ())))
    output = _largest(request, *limits) or DEFAULT_MAX_OUTPUT
    answers = _largest(request, *counts) or 1
    return CallUsage(input_tokens=size, output_tokens=min(output, LIMIT) * min(answers, LIMIT))


def _largest(request: dict[str, Any], containers: tuple[Any, ...], names: tuple[str, ...]) -> int | None:
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
