"""Provider trouble handled once, for every agent: which answers the relay retries and how long it
waits. 429 (rate limited), 529 (Anthropic overloaded) and any 5xx are retried, waiting what the
provider's `retry-after-ms` or `Retry-After` (seconds or an HTTP date) asks, else a doubling
backoff from 1 s; every wait is capped (BOT_RELAY_RETRY_MAX_WAIT) and so is the number of retries
(BOT_RELAY_RETRIES), as the entry point's settings say (`RetryPolicy.from_settings`). A retry
happens only before any byte of the answer reached the CLI. A 429 or 529 that asks for a longer
wait than the cap is not retried (bot/relay/unavailable.py says why).
"""
from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from bot.config.table import variable
from bot.retry import retry_after_s

if TYPE_CHECKING:
    from bot.config import Settings

BACKOFF_START_S = 1.0
asked_wait_s = retry_after_s  # what the provider asked: the bot's one Retry-After parser


def retryable(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def _table_default(name: str) -> Any:
    found = variable(name)
    return found.parse(found.default) if found.default is not None else None


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long the relay retries; by default, as the configuration table says."""

    retries: int = _table_default("BOT_RELAY_RETRIES")
    max_wait_s: float = float(_table_default("BOT_RELAY_RETRY_MAX_WAIT"))

    @classmethod
    def from_settings(cls, settings: Settings) -> RetryPolicy:
        return cls(retries=max(0, settings.whole("BOT_RELAY_RETRIES")),
                   max_wait_s=max(0.0, settings.number("BOT_RELAY_RETRY_MAX_WAIT")))

    def too_long(self, status: int, headers: Mapping[str, str]) -> bool:
        """A rate limit or overload that asks for more than the longest wait: retrying sooner would
        only be refused again, so the relay gives up at once."""
        asked = asked_wait_s(headers)
        return status in (429, 529) and asked is not None and asked > self.max_wait_s

    def wait_s(self, attempt: int, headers: dict[str, str]) -> float:
        """Seconds before retry number `attempt` (1-based), from the provider's headers if it said."""
        asked = asked_wait_s(headers)
        wait = asked if asked is not None else BACKOFF_START_S * 2 ** (attempt - 1)
        return min(max(wait, 0.0), self.max_wait_s)


def busy_note(status: int, wait_s: float, attempt: int, retries: int) -> str:
    """The tracking comment's line: "provider busy (429), retrying in 20 s (retry 1 of 4)"."""
    shown = f"{wait_s:.0f} s" if wait_s >= 1 else f"{wait_s * 1000:.0f} ms"
    return f"provider busy ({status}), retrying in {shown} (retry {attempt} of {retries})"


# What a failed connection says, in the words of the person who must fix it. Refused, unresolvable
# or unroutable: no retry helps within minutes, so the turn ends at once with this line.
_CONNECT_FAILURES = (("refused", "connection refused"), ("name or service not known", "its name does not resolve"),
                     ("temporary failure in name resolution", "its name does not resolve"),
                     ("nodename nor servname", "its name does not resolve"),
                     ("network is unreachable", "the network is unreachable"),
                     ("no route to host", "there is no route to it"))


def unreachable_reason(root: str, error: BaseException) -> str:
    """One line naming the upstream the relay could not connect to (never the relay's own address)."""
    host = urlsplit(root).netloc or root
    chain = _chain(error)
    text = " ".join(str(e) for e in chain).lower()
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        text += " refused"
    if any(isinstance(e, socket.gaierror) for e in chain):
        text += " name or service not known"
    what = next((words for needle, words in _CONNECT_FAILURES if needle in text),
                f"the connection failed ({type(error).__name__})")
    return (f"the model provider at {host} could not be reached: {what} "
            "(check the network, and BOT_<AGENT>_BASE_URL if it is set)")


def _chain(error: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while error is not None and error not in seen and len(seen) < 8:
        seen.append(error)
        error = error.__cause__ or error.__context__
    return seen
