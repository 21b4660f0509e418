"""Anthropic's Messages API, as the model relay speaks it: POST /v1/messages and
/v1/messages/count_tokens at https://api.anthropic.com, the key in `x-api-key` (an OAuth token as a
bearer). Everything the bot knows of it is here (bot/relay/wire_api.py reads it).

Provider-run tools: every typed tool but the client-run computer/bash/text_editor/memory ones (and
`custom`) is the provider's; the beta flags enabling them leave `anthropic-beta`; `mcp_servers` (a
connector) is refused without web access.

Usage: `cache_creation` splits the cache writes by retention (five minutes, one hour); cache reads
and writes are reported beside the input count, not inside it. A stream's usage is in its
`message_start` (the input) and `message_delta` (cumulative output) events.
"""
from __future__ import annotations

import re
from typing import Any

from bot.relay.call_usage import CallUsage, count, mapping, model_of
from bot.relay.grammar import HELD, Judge, Many, One, Ref, Union, Url, kind, obj, provider_ran, text_part, typed
from bot.relay.wire_api import (
    Body,
    CheapCall,
    Headers,
    Hold,
    Path,
    ToolJudge,
    Unavailable,
    UsageRead,
    UsageReading,
    WireApi,
    dated,
    without_provider_tools,
)

NAME = "anthropic"
_CLIENT_TOOL = re.compile(r"^(custom|(computer|bash|text_editor|memory)_\d{8})$")
_BETA_PREFIXES = (b"web-search-", b"web-fetch-", b"code-execution-", b"mcp-client-", b"files-api-", b"skills-")
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 415: "invalid_request_error",
                429: "rate_limit_error", 502: "api_error", 529: "overloaded_error"}
_STREAM_KINDS = ("message_start", "message_delta")

# ---------------------------------------------------------------- the body's grammar

_IMAGE_SOURCE = Union("image source", {
    "base64": kind("base64 source", "media_type", "data"),
    "url": kind("url source", url=Url("an image given by URL")),
    "file": kind("file source", file_id=HELD)}, typed)
_DOCUMENT_SOURCE = Union("document source", {
    "base64": kind("base64 source", "media_type", "data"),
    "text": kind("text source", "media_type", "data"),
    "url": kind("url source", url=Url("a document given by URL")),
    "file": kind("file source", file_id=HELD)}, typed)
_BLOCKS = {
    "text": kind("text block", "text", "cache_control", "citations"),
    "image": kind("image block", "cache_control", source=One(_IMAGE_SOURCE)),
    "thinking": kind("thinking block", "thinking", "signature"),
    "redacted_thinking": kind("redacted thinking block", "data"),
    "tool_use": kind("tool use block", "id", "name", "input", "cache_control", "caller"),
    "tool_reference": kind("tool reference block", "tool_name", "cache_control"),
    **provider_ran("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                   "code_execution_tool_result", "bash_code_execution_tool_result",
                   "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
                   "mcp_tool_result", "container_upload"),
}
_CONTENT = Union("content block", _BLOCKS, typed, text_part("text"))
_DOCUMENT_SOURCE.members["content"] = kind("content source", content=Many(_CONTENT))
_BLOCKS.update({
    "document": kind("document block", "title", "context", "citations", "cache_control",
                     source=One(_DOCUMENT_SOURCE)),
    "search_result": kind("search result block", "source", "title", "citations", "cache_control",
                          content=Many(_CONTENT)),
    "tool_result": kind("tool result block", "tool_use_id", "is_error", "cache_control",
                        content=Many(_CONTENT, text=True)),
})
GRAMMAR = obj("Messages request",
              "model", "max_tokens", "metadata", "stop_sequences", "stream", "temperature", "top_k", "top_p",
              "tools", "tool_choice", "thinking", "service_tier", "context_management", "output_config",
              "output_format", "mcp_servers", "speed", "inference_geo",
              system=Many(_CONTENT, text=True),
              messages=Many(obj("message", "role", content=Many(_CONTENT, text=True))),
              container=Ref("a code-execution container the provider holds"))


# ---------------------------------------------------------------- provider-run tools

def _provider_run(request: dict[str, Any], judge: ToolJudge) -> None:
    if "mcp_servers" in request:
        judge.connector("the MCP connector `mcp_servers`")

    def named(tool: Any) -> str | None:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind is None or (isinstance(kind, str) and _CLIENT_TOOL.match(kind)):
            return None
        return f"provider-run tool {str(kind)[:80]}"

    if without_provider_tools(request, "tools", named, judge):
        request.pop("tool_choice", None)


def _without_beta_flags(headers: Headers, judge: Judge) -> Headers:
    out = []
    for name, value in headers:
        if name == b"anthropic-beta":
            flags = [f.strip() for f in value.split(b",") if f.strip()]
            value = b",".join(f for f in flags if not (f.lower().startswith(_BETA_PREFIXES)
                                                       and not judge.keeps(f"beta flag {f.decode('latin-1')}")))
            if not value:
                continue
        out.append((name, value))
    return out


# ---------------------------------------------------------------- usage

def usage(counts: dict[str, Any]) -> CallUsage:
    """`cache_creation` splits the cache writes by retention (five minutes, one hour)."""
    by_retention = mapping(counts.get("cache_creation"))
    one_hour = count(by_retention.get("ephemeral_1h_input_tokens"))
    writes = max(count(counts.get("cache_creation_input_tokens")),
                 count(by_retention.get("ephemeral_5m_input_tokens")) + one_hour)
    return CallUsage(input_tokens=count(counts.get("input_tokens")), output_tokens=count(counts.get("output_tokens")),
                     cached_tokens=count(counts.get("cache_read_input_tokens")), cache_write_tokens=writes,
                     long_cache_write_tokens=min(one_hour, writes))


def _reply(body: Any) -> UsageRead:
    body = mapping(body)
    counts = body.get("usage")
    return (usage(counts) if isinstance(counts, dict) else None), model_of(body)


def _kept(data: dict[str, Any]) -> str | None:
    kind = data.get("type")  # the event's type is inside its data as well as on its event: line
    return kind if kind in _STREAM_KINDS else None


def _events(events: dict[str, dict[str, Any]]) -> UsageRead:
    start = mapping(mapping(events.get("message_start")).get("message"))
    counts = dict(mapping(start.get("usage")))
    counts.update({k: v for k, v in mapping(mapping(events.get("message_delta")).get("usage")).items()
                   if v is not None})  # message_delta's counts are cumulative
    model = start.get("model") if isinstance(start.get("model"), str) else None
    return (usage(counts) if counts else None), model


# ---------------------------------------------------------------- errors and the key test

def _error(status: int, message: str, code: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


def _cheap_call(model: str, bearer: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    headers = {"anthropic-version": "2023-06-01", **({"anthropic-beta": "oauth-2025-04-20"} if bearer else {})}
    return "/v1/messages", {"model": model, "max_tokens": 1, "messages": [{"role": "user", "content": "ping"}]}, headers


WIRE_API = WireApi(
    name=NAME, title="Anthropic Messages",
    key_header="x-api-key",
    providers={"anthropic": "https://api.anthropic.com"},
    paths=(Path("POST", b"/v1/messages"), Path("POST", b"/v1/messages/count_tokens", metered=False)),
    error=_error, error_prefixes=(b"/v1/messages",),
    body=Body(GRAMMAR, _provider_run, headers=_without_beta_flags),
    usage=UsageReading(_reply, (b"message_start", b"message_delta"), _kept, _events),
    hold=Hold(((None,), ("max_tokens",))),
    unavailable=Unavailable(overloaded=(529,)),
    key_test=CheapCall({"anthropic": "claude-haiku-4-5"}, _cheap_call),
    price_names=dated,
)
