"""A provider that cannot serve the episode now, as the relay itself saw it: the upstream status,
its error body and its Retry-After, never the CLI's account of them.

    found = classify(status, body, headers)   # ProviderUnavailable | None
    found.kind                                # "overloaded" | "quota" | "rate_limited"

Overloaded: a status a wire API's record declares overloaded (`unavailable.overloaded`, e.g. 529),
an error whose type says overloaded, or a 503 whose words say so. Quota: a 429 whose error type or
code is one a record declares spent quota (`unavailable.quota`). Rate limited: any other 429. The
records are read together: a gateway may answer in another API's words than the one called.
`words` is the provider's own message, cut to `MAX_WORDS` characters: text someone else wrote,
made inert wherever it is shown.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from bot.relay import wire_api
from bot.relay.retry import asked_wait_s

MAX_WORDS = 300
KINDS = ("overloaded", "quota", "rate_limited")
EVENT = "provider_unavailable"  # the enforced event the relay records per episode


@dataclass(frozen=True)
class ProviderUnavailable:
    kind: str  # one of KINDS
    status: int
    retry_after_s: float | None  # what the provider asked (Retry-After), None when it did not say
    words: str  # the provider's message, bounded; hostile text
    provider: str = ""

    def as_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> ProviderUnavailable | None:
        try:
            data = json.loads(text or "")
            found = cls(kind=str(data["kind"]), status=int(data["status"]),
                        retry_after_s=None if data.get("retry_after_s") is None else float(data["retry_after_s"]),
                        words=str(data.get("words") or "")[:MAX_WORDS], provider=str(data.get("provider") or ""))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None
        return found if found.kind in KINDS else None


def classify(status: int, body: bytes, headers: Mapping[str, str], provider: str = "") -> ProviderUnavailable | None:
    """The provider's answer as an unavailability, or None when it is some other failure."""
    if status != 429 and status < 500:
        return None
    error = _error(body)
    marks = " ".join(str(error.get(key) or "") for key in ("type", "code", "status")).lower()
    message = error.get("message")
    words = (message if isinstance(message, str) else body.decode("utf-8", "replace"))[:MAX_WORDS]
    if status in _overloaded() or "overloaded" in marks or (status == 503 and "overloaded" in words.lower()):
        kind = "overloaded"
    elif status == 429 and any(mark in marks for mark in quota_marks()):
        kind = "quota"
    elif status == 429:
        kind = "rate_limited"
    else:
        return None
    lowered = {name.lower(): value for name, value in headers.items()}
    return ProviderUnavailable(kind, status, asked_wait_s(lowered), words.strip(), provider)


def _error(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return {}
    error = data.get("error") if isinstance(data, dict) else None
    return error if isinstance(error, dict) else {}


def observed(events: list[dict[str, Any]]) -> ProviderUnavailable | None:
    """What the relay recorded for this episode (its last unavailability), from the run's events."""
    found = [e for e in events if e.get("kind") == EVENT and e.get("tier") == "enforced"]
    return ProviderUnavailable.from_json(found[-1].get("raw")) if found else None


def worth_reading(status: int) -> bool:
    """Only these answers can be an unavailability: any other is passed on unread."""
    return status in (429, 503) or status in _overloaded()


def quota_marks() -> tuple[str, ...]:
    """A 429's error type, code or status that says the account's quota is spent, as the records say."""
    return tuple(mark for api in wire_api.records() for mark in api.unavailable.quota)


def _overloaded() -> set[int]:
    return {status for api in wire_api.records() for status in api.unavailable.overloaded}


def replayed(response: httpx.Response, body: bytes) -> httpx.Response:
    """A response whose body the relay has read, as a fresh one to pass on byte for byte."""
    headers = [(name, value) for name, value in response.headers.raw if name.lower() != b"content-encoding"]
    return httpx.Response(response.status_code, headers=headers, stream=httpx.ByteStream(body))


def stop_reason(found: ProviderUnavailable) -> str:
    """The relay's stop line (the episode's error): what happened and when to retry, no provider text."""
    what = {"overloaded": "is overloaded", "quota": "is out of quota",
            "rate_limited": "is rate limiting this key"}[found.kind]
    return f"the {found.provider or 'model'} provider {what} (HTTP {found.status}){retry_words(found)}"


def retry_words(found: ProviderUnavailable) -> str:
    if found.retry_after_s is None:
        return ""
    return f"; it asks to retry in {duration(found.retry_after_s)}"


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"
