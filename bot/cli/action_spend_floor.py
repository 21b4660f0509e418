"""The thread's spend floor in the Action, read from the bot's own answers in the thread.

A workflow run starts with an empty ledger and the session cache is written by runs an attacker can
influence (a fork's pull request run), so a cache entry that leaves out the thread's spend rows would
reset the thread's spend. The thread itself holds a record the cache cannot write: each of the
bot's answers ends with its marker (bot/record/provenance.py), which carries the thread's
cumulative spend after that turn, in what the thread caps read (tokens, USD). After the cache is
restored the ledger's thread figure is raised to the largest of those, never lowered.

Read as an allowlist: only comments the bot's own account wrote (anyone can type a marker into their
own comment; a forged high figure would exhaust the thread's budget), at most MAX_COMMENTS of them,
newest first, each of at most MAX_BODY characters; only the markers in the trailing lines of HTML
comments the bot appends after its answer (never one quoted inside the answer's text); the marker's
JSON in MARKER_GRAMMAR, of this thread, with whole tokens and finite USD in range. Anything else is
ignored and counted.
"""
from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from bot.db import Database
from bot.github.client import is_own_comment
from bot.record.recorder import now_iso
from bot.relay.budgets import Ledger, Scope

MAX_COMMENTS = 500  # the bot's own comments read, newest first; the newest marker already holds the most
MAX_BODY = 70_000  # GitHub keeps a comment under 65,536 characters
MAX_TAIL_LINES = 8  # the markers the bot appends after its answer, one a line
MAX_MARKER = 2_048
MAX_THREAD_TOKENS = 10 ** 12
MAX_THREAD_USD = 1_000_000.0
_MARKER = re.compile(r"<!-- bot:run (\{[^\n]*\}) -->")  # its JSON at most MAX_MARKER characters
_PAYLOAD = frozenset({"conversation", "backend", "session", "run", "spend"})
_SPEND = frozenset({"tokens", "usd"})
log = logging.getLogger("bot.cli.action_spend_floor")


@dataclass(frozen=True)
class Floor:
    """The largest spend the bot's markers in the thread carry, and what the reading passed over."""

    tokens: int = 0
    usd: float = 0.0
    markers: int = 0  # valid markers carrying spend
    ignored: int = 0  # markers of the bot's outside the grammar, or comments over the bounds
    not_ours: int = 0  # comments not written by the bot that carry a marker

    def over(self, other: Floor) -> Floor:
        return Floor(max(self.tokens, other.tokens), max(self.usd, other.usd), self.markers + other.markers,
                     self.ignored + other.ignored, self.not_ours + other.not_ours)


def read(comments: Iterable[object], key: str, own: Collection[str]) -> Floor:
    """The floor the thread's `comments` (oldest first, as GitHub lists them) set for `key`."""
    floor, read_count = Floor(), 0
    for comment in reversed(list(comments)):
        if read_count >= MAX_COMMENTS:
            break
        if not isinstance(comment, dict):
            continue
        body = comment.get("body")
        if not isinstance(body, str) or "<!-- bot:run " not in body:
            continue
        if not is_own_comment(comment, own):
            floor = floor.over(Floor(not_ours=1))
            continue
        read_count += 1
        floor = floor.over(_from_body(body, key))
    return floor


def _from_body(body: str, key: str) -> Floor:
    if len(body) > MAX_BODY:
        return Floor(ignored=1)
    found = Floor()
    for line in _tail(body):
        match = _MARKER.fullmatch(line)
        if match is None:
            continue
        if len(match.group(1)) > MAX_MARKER:
            found = found.over(Floor(ignored=1))
            continue
        spend = parse(match.group(1), key)
        if spend is None:
            found = found.over(Floor(ignored=1))
        elif spend:
            found = found.over(Floor(spend[0], spend[1], markers=1))
    return found


def _tail(body: str) -> list[str]:
    """The HTML comment lines that end the body: what the bot appends after its answer."""
    lines = []
    for line in reversed(body.rstrip().split("\n")[-MAX_TAIL_LINES:]):
        line = line.strip()
        if not (line.startswith("<!--") and line.endswith("-->")):
            break
        lines.append(line)
    return lines


def parse(text: str, key: str) -> tuple[int, float] | tuple[()] | None:
    """(tokens, usd) of a marker's JSON; () for a marker of this thread that carries no spend (an
    answer before spend was carried, or a thread that spent nothing); None outside the grammar."""
    try:
        value = json.loads(text, parse_constant=_refused)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict) or not set(value) <= _PAYLOAD or value.get("conversation") != key:
        return None
    if "spend" not in value:
        return ()
    spend = value["spend"]
    if not isinstance(spend, dict) or set(spend) != _SPEND:
        return None
    tokens, usd = spend["tokens"], spend["usd"]
    if not _whole(tokens, MAX_THREAD_TOKENS) or not _real(usd, MAX_THREAD_USD):
        return None
    return tokens, float(usd)


def _refused(name: str) -> float:
    raise ValueError(f"{name} is not a number the bot writes")


def _whole(value: object, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high


def _real(value: object, high: float) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if isinstance(value, int):
        return 0 <= value <= high
    return math.isfinite(value) and 0.0 <= value <= high


def _up_to_ledger_precision(usd: float) -> float:
    """The ledger keeps 8 decimals; a floor is rounded up to them, never below the marker's figure
    (rounding to nearest lowered 0.3333333333 to 0.33333333). The 1e-6 step below keeps an exact
    figure such as 0.3 (30000000.000000004 steps of 1e-8) from gaining a step."""
    return max(0.0, math.ceil(usd * 1e8 - 1e-6) / 1e8)


def raise_to(db: Database, key: str, floor: Floor) -> tuple[int, float]:
    """Raise the ledger's figure for the thread to at least the floor, by one row of what is
    missing (counted for the thread only: no requester, no installation); returns what was added."""
    held = Ledger(db).spent(Scope(conversation=key))["thread"]
    tokens = max(0, floor.tokens - held.tokens)
    usd = _up_to_ledger_precision(floor.usd - held.usd)
    if tokens or usd:
        db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, tokens, usd) "
                   "VALUES (NULL, ?, ?, NULL, NULL, ?, ?)", [now_iso(), key, tokens, usd])
    return tokens, usd
