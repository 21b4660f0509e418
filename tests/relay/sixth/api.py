"""The sixth wire API's record, written in this test package only: everything the bot knows of the
API its provider (provider.py) speaks is declared here, and no other file of the bot names it. An
installed package adds it under the `bot.wire_apis` entry-point group (plugin.py writes that
package's metadata).

The API: POST /sixth/v1/ask {"model", "limit", "prompt": [{"role", "text"}]} with the key in
`x-api-key`; the answer {"model", "answer", "spent": {"in", "out"}}; an error {"problem": {"status",
"say"}}. A 429 whose problem says `wallet_empty` is a spent quota.
"""
from __future__ import annotations

from typing import Any

from bot.relay.call_usage import CallUsage, count, mapping, model_of
from bot.relay.grammar import Many, obj
from bot.relay.wire_api import (
    Body,
    CheapCall,
    Hold,
    Path,
    ToolJudge,
    Unavailable,
    UsageRead,
    UsageReading,
    WireApi,
)

NAME = "sixth"
PROVIDER = "sixthcloud"
ASK = b"/sixth/v1/ask"
GRAMMAR = obj("ask request", "model", "limit", "stream", prompt=Many(obj("turn", "role", "text")))


def _no_provider_tools(request: dict[str, Any], judge: ToolJudge) -> None:
    """The API has no tool the provider runs."""


def _reply(body: Any) -> UsageRead:
    body = mapping(body)
    spent = body.get("spent")
    usage = CallUsage(input_tokens=count(spent.get("in")), output_tokens=count(spent.get("out"))) \
        if isinstance(spent, dict) else None
    return usage, model_of(body)


def _kept(data: dict[str, Any]) -> str | None:
    return "spent" if isinstance(data.get("spent"), dict) else None


def _events(events: dict[str, dict[str, Any]]) -> UsageRead:
    return _reply(events.get("spent"))


def _error(status: int, message: str, code: str) -> dict[str, Any]:
    return {"problem": {"status": status, "say": message, "code": code}}


def _cheap_call(model: str, bearer: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    return ASK.decode(), {"model": model, "limit": 1, "prompt": [{"role": "user", "text": "ping"}]}, {}


WIRE_API = WireApi(
    name=NAME, title="Sixth Ask",
    key_header="x-api-key",
    providers={PROVIDER: "https://sixth.invalid"},
    paths=(Path("POST", ASK),),
    error=_error, error_prefixes=(b"/sixth/",),
    body=Body(GRAMMAR, _no_provider_tools),
    usage=UsageReading(_reply, (b'"spent"',), _kept, _events),
    hold=Hold(((None,), ("limit",))),
    unavailable=Unavailable(quota=("wallet_empty",)),
    key_test=CheapCall({PROVIDER: "sixth-small"}, _cheap_call),
)
