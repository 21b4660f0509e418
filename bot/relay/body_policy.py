"""What the relay lets through in a request body. Every body it forwards is parsed here and what goes
upstream is that parse, serialised again: the provider reads exactly what the relay judged (no
second reading of a duplicated key, an escaped key name or a compressed body).

- A body that is not one JSON object is refused (400), and so is any request `Content-Encoding`
  (415): the relay cannot judge what it cannot read.
- Provider-run tools (the provider searches, fetches, runs code or calls a server on its own side,
  unseen by the egress proxy) pass only when the repository turned web access on; each one is then
  listed in `Checked.allowed` for the record. Without web access:
    * tools the provider runs are dropped from the request (`Checked.dropped`), so a CLI that always
      offers one keeps working without it; the headers enabling them are removed;
    * connectors to a remote MCP server are refused (400): they name a server and often a
      credential, no CLI sends one by default, and dropping one would hide the attempt.
  Which tools, options and headers those are, each API's record says (its `body`: bot/relay/wire_apis/).
- Then the request is read against the grammar of its API (bot/relay/grammar.py, the record's
  `body.grammar`): unknown fields and parts are dropped, a part the provider would fetch
  (given by URL, or a file it holds) passes only with web access; each drop is in `Checked.dropped`.
  A model that searches the web on every call is refused (400) without web access.
- A streamed call of an API whose stream reports usage only when asked always asks for it (the
  record's `body.asks_usage`); when the client did not, `Checked.strip_usage` tells the relay to
  remove it again from the reply.
- An API whose record declares no body grammar has every body refused (400).
- `Checked.ceiling` is left for the relay to read from what leaves (bot/relay/reservation.py).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from bot.errors import BotError
from bot.relay import grammar, wire_api
from bot.relay.call_usage import CallUsage


class BodyRefused(BotError):
    """A request the relay answers itself, in the called API's error format."""

    def __init__(self, status: int, why: str, message: str):
        super().__init__(message)
        self.status, self.message, self.outcome = status, message, f"refused:{why}"


@dataclass
class Checked:
    body: bytes  # what goes upstream
    headers: list[tuple[bytes, bytes]]
    model: str | None = None
    ceiling: CallUsage = field(default_factory=CallUsage)
    strip_usage: bool = False
    dropped: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)
    request: dict[str, Any] | None = None  # what `body` serialises, for a reader that needs it parsed


class _Judge:
    """Decides each provider-run item by the repository's web access, and remembers what it did."""

    def __init__(self, web_access: bool):
        self.web_access = web_access
        self.dropped: list[str] = []
        self.allowed: list[str] = []

    def keeps(self, what: str) -> bool:
        (self.allowed if self.web_access else self.dropped).append(what)
        return self.web_access

    def drop(self, what: str) -> None:
        self.dropped.append(what)

    def connector(self, what: str) -> None:
        if self.web_access:
            self.allowed.append(what)
            return
        raise BodyRefused(400, "provider_tool", f"the model relay refused {what}: the provider would reach that "
                          "server itself, and web access is off for this repository (`web_access` in .github/bot.yml)")


def check(api: str, raw: bytes, headers: list[tuple[bytes, bytes]], *, web_access: bool,
          model: str | None = None) -> Checked:
    """The request as it may go upstream; raises BodyRefused for what may not."""
    for name, value in headers:
        if name == b"content-encoding" and value.strip().lower() != b"identity":
            raise BodyRefused(415, "encoded", "the model relay refuses a compressed request body "
                          f"(Content-Encoding: {value[:40].decode('latin-1')}); send it uncompressed")
    declared = wire_api.get(api).body
    if declared is None:
        raise BodyRefused(400, "unreadable", "the model relay cannot judge a request body of this API, so it "
                          "forwards none")
    request = _parse(raw)
    judge = _Judge(web_access)
    declared.provider_run(request, judge)
    named = request.get("model")
    model = model or (named if isinstance(named, str) else None)
    refusal = grammar.model_refusal(model, web_access=web_access)
    if refusal is not None:
        raise BodyRefused(400, "search_model", refusal)
    grammar.read(declared.grammar, request, judge)
    strip_usage = declared.asks_usage is not None and declared.asks_usage(request)
    if declared.headers is not None:
        headers = declared.headers(headers, judge)
    return Checked(orjson.dumps(request), headers, model, CallUsage(), strip_usage, judge.dropped, judge.allowed,
                   request)


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        request = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BodyRefused(400, "unreadable",
                          f"the model relay could not read the request body as JSON ({exc})") from None
    if not isinstance(request, dict):
        raise BodyRefused(400, "unreadable", "the model relay forwards only a JSON object as the request body")
    return request


def provider_run_items(checked: Checked) -> Iterable[tuple[str, str]]:
    """(outcome, what) for the record: each provider-run item dropped or allowed."""
    yield from (("dropped", what) for what in checked.dropped)
    yield from (("allowed", what) for what in checked.allowed)
