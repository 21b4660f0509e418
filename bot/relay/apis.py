"""What the relay forwards, read from the wire APIs' records (bot/relay/wire_api.py,
bot/relay/wire_apis/): the paths of each API, which provider is called with which, where a key
travels, and how an error looks in the called API's own format (so the CLI shows the model the
relay's refusals). Nothing but a declared path is forwarded. `HEAD /` (Claude Code's connectivity
preflight) is answered by the relay itself.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from bot.relay import wire_api
from bot.relay.wire_api import KEY_CARRIERS

__all__ = ["DEFAULT_BASE", "KEY_CARRIERS", "KEY_HEADER", "QUERY_KEY_CARRIERS", "Route", "api_of_path", "error_body",
           "error_type", "route", "serves"]

wire_api.records()  # every record is registered before the tables below are read (or pointed elsewhere)
# provider -> its API root; provider -> where it takes its key (the relay's upstream side)
DEFAULT_BASE = wire_api.DEFAULT_BASE
KEY_HEADER = wire_api.KEY_HEADER
# query parameters that carry a key somewhere (compared lowercased, after percent-decoding): each
# must hold the episode's token, and none is forwarded
QUERY_KEY_CARRIERS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token", "x-api-key",
                                "x-goog-api-key", "authorization"})


@dataclass(frozen=True)
class Route:
    wire: str  # the API the call is read by (its record's name)
    api: str  # what the record of the call names: the API's name, or its path's own label
    model: str | None = None  # named in the path by some APIs
    metered: bool = True  # a token count or a model list produces no usage
    only: str | None = None  # the one provider this path belongs to

    @property
    def record(self) -> wire_api.WireApi:
        return wire_api.get(self.wire)


def route(method: str, raw_path: bytes) -> Route | None:
    """The API of a forwardable request, else None (the relay refuses it)."""
    table = wire_api.routes()
    found = table.exact.get((method, raw_path))
    if found is not None:
        api, path = found
        return Route(api.name, path.label or api.name, metered=path.metered, only=path.only)
    for api, pattern in table.patterns:
        if pattern.method == method and (match := pattern.pattern.match(raw_path)):
            return Route(api.name, api.name, match.group(1).decode(), metered=match.group(2) not in pattern.unmetered)
    return None


def serves(provider: str, route: Route) -> bool:
    """Whether `provider` is called with this route (the relay forwards nothing else to it). A
    provider some path names as its only one is called with its own paths alone."""
    if route.only is not None:
        return provider == route.only
    return provider in route.record.providers and provider not in wire_api.routes().owners


def api_of_path(raw_path: bytes) -> str | None:
    """The API whose error format a refused path is answered in: the record declaring the longest
    prefix of the path (best guess), None when none does."""
    found = [(len(prefix), api.name) for api in wire_api.records() for prefix in api.error_prefixes
             if raw_path.startswith(prefix)]
    return max(found)[1] if found else None


def error_body(api: str | None, status: int, message: str, code: str = "relay") -> bytes:
    """`message` as the API's own error object for `status` (a plain one when no API is known)."""
    body = wire_api.get(api).error(status, message, code) if api else {"error": {"message": message, "code": code}}
    return json.dumps(body).encode()


def error_type(body: bytes) -> str:
    """The provider's error type or status word from an error body, for a message (never its text,
    which may quote part of the key)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    found = error.get("type") or error.get("status") or error.get("code")
    return str(found)[:60] if isinstance(found, (str, int)) else ""
