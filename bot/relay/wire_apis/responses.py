"""OpenAI's Responses API, as the model relay speaks it: POST /v1/responses at OpenAI and the
OpenAI-compatible providers that speak it, and ChatGPT's Codex backend under a Codex ChatGPT login
(POST /backend-api/codex/responses, and the account's model list GET /backend-api/codex/models,
reached by nothing else). The key as a bearer token. Everything the bot knows of it is here
(bot/relay/wire_api.py reads it).

Provider-run tools: every tool but the client-run function, custom, namespace (its tools judged
alike), local_shell, shell, apply_patch and tool_search ones, also inside Codex's
`additional_tools` item and a tool search's output; an `mcp` tool (a connector) is refused without
web access.

Usage: the input count includes the cache reads and writes its details break out, the output count
the reasoning; a stream's usage is in its last `response.completed` (or incomplete, failed) event.
"""
from __future__ import annotations

from typing import Any

from bot.relay.call_usage import mapping, model_of
from bot.relay.grammar import HELD, Many, Union, Url, kind, obj, provider_ran, text_part, typed
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
    dated,
    without_provider_tools,
)
from bot.relay.wire_apis import openai_family

NAME = "responses"
CHATGPT = "chatgpt"  # a Codex ChatGPT login: ChatGPT's Codex backend, reached only by its own paths
CHATGPT_BASE = b"/backend-api/codex"  # Codex's base URL under a ChatGPT login: <root>/backend-api/codex
# Responses tools the client runs (`tool_search` searches only the request's own deferred tools); any
# other type is the provider's (web_search*, file_search, code_interpreter, computer*, image_generation, …)
_CLIENT_TOOLS = frozenset({"function", "custom", "namespace", "local_shell", "shell", "apply_patch", "tool_search"})
# input items that declare tools for the next call: Codex's `additional_tools`, a client tool search's output
_TOOL_ITEMS = frozenset({"additional_tools", "tool_search_output"})
_FINAL = ("response.completed", "response.incomplete", "response.failed")

# ---------------------------------------------------------------- the body's grammar

_PART = Union("content part", {
    "input_text": kind("text part", "text"),
    "input_image": kind("image part", "detail", image_url=Url("an image given by URL"), file_id=HELD),
    "input_file": kind("file part", "filename", file_data=Url("a file given by URL"),
                       file_url=Url("a file given by URL"), file_id=HELD),
    "input_audio": kind("audio part", "input_audio"),
    "output_text": kind("output text part", "text", "annotations", "logprobs"),
    "refusal": kind("refusal part", "refusal"),
    "summary_text": kind("summary part", "text"),
    "reasoning_text": kind("reasoning part", "text"),
    "encrypted_content": kind("encrypted part", "encrypted_content"),  # Codex: a tool's output it cannot read
}, typed, text_part("input_text"))
_OUTPUT = Many(_PART, text=True)
_CALL = ("id", "call_id", "status")
_ITEMS = Union("input item", {
    "message": kind("message", "id", "role", "status", "phase", "end_turn", content=_OUTPUT),
    "function_call": kind("function call", *_CALL, "name", "arguments", "namespace"),
    "function_call_output": kind("function call output", *_CALL, output=_OUTPUT),
    "custom_tool_call": kind("custom tool call", *_CALL, "name", "input", "namespace"),
    "custom_tool_call_output": kind("custom tool call output", *_CALL, output=_OUTPUT),
    "local_shell_call": kind("local shell call", *_CALL, "action"),
    "local_shell_call_output": kind("local shell call output", *_CALL, "output"),
    "tool_search_call": kind("tool search call", *_CALL, "execution", "arguments"),
    "tool_search_output": kind("tool search output", *_CALL, "execution", "tools"),  # tools: the body policy's
    "reasoning": kind("reasoning", "id", "summary", "content", "encrypted_content", "status"),
    "compaction": kind("compaction", "id", "encrypted_content"),
    "compaction_summary": kind("compaction", "id", "encrypted_content"),
    "item_reference": kind("item reference", "id"),
    "additional_tools": kind("additional tools", "id", "role", "tools"),  # Codex: judged by the body policy
    **provider_ran("web_search_call", "file_search_call", "computer_call", "computer_call_output",
                   "image_generation_call", "code_interpreter_call", "mcp_list_tools", "mcp_approval_request",
                   "mcp_approval_response", "mcp_call"),
}, lambda item: typed(item) or ("message" if "role" in item else None))
GRAMMAR = obj("Responses request",
              "model", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store",
              "include", "prompt_cache_key", "prompt_cache_retention", "client_metadata", "text", "stream",
              "stream_options", "max_output_tokens", "max_tool_calls", "metadata", "previous_response_id",
              "conversation", "safety_identifier", "service_tier", "temperature", "top_p", "top_logprobs",
              "truncation", "user", "background", "context_management",
              input=Many(_ITEMS, text=True), instructions=Many(_ITEMS, text=True))


# ---------------------------------------------------------------- provider-run tools

def _tool(tool: Any, judge: ToolJudge) -> str | None:
    kind = tool.get("type", "function") if isinstance(tool, dict) else "function"
    if kind == "mcp":
        judge.connector(f"the MCP connector {str(tool.get('server_label') or tool.get('server_url'))[:80]!r}")
        return None
    if kind == "namespace":  # its tools are declared inside it
        without_provider_tools(tool, "tools", lambda inner: _tool(inner, judge), judge)
    return None if isinstance(kind, str) and kind in _CLIENT_TOOLS else f"provider-run tool {str(kind)[:80]}"


def _provider_run(request: dict[str, Any], judge: ToolJudge) -> None:
    if without_provider_tools(request, "tools", lambda tool: _tool(tool, judge), judge):
        request.pop("tool_choice", None)
    items = request.get("input")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"] in _TOOL_ITEMS:
            without_provider_tools(item, "tools", lambda tool: _tool(tool, judge), judge)


# ---------------------------------------------------------------- usage and the key test

def _reply(body: Any) -> UsageRead:
    body = mapping(body)
    counts = body.get("usage")
    return (openai_family.usage(counts, "input_tokens", "output_tokens") if isinstance(counts, dict) else None,
            model_of(body))


def _kept(data: dict[str, Any]) -> str | None:
    return "final" if data.get("type") in _FINAL else None


def _events(events: dict[str, dict[str, Any]]) -> UsageRead:
    return _reply(mapping(mapping(events.get("final")).get("response")))


def _cheap_call(model: str, bearer: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    return "/v1/responses", {"model": model, "input": "ping", "max_output_tokens": 16}, {}


WIRE_API = WireApi(
    name=NAME, title="OpenAI Responses",
    key_header=openai_family.KEY_HEADER,
    providers={**openai_family.roots("openai", "openrouter", "groq", "xai"), CHATGPT: "https://chatgpt.com"},
    paths=(Path("POST", b"/v1/responses"),
           Path("POST", CHATGPT_BASE + b"/responses", only=CHATGPT),
           Path("GET", CHATGPT_BASE + b"/models", metered=False, only=CHATGPT, label="models")),
    error=openai_family.error, error_prefixes=(b"",),  # a path no API claims is answered as OpenAI answers
    body=Body(GRAMMAR, _provider_run),
    usage=UsageReading(_reply, tuple(kind.encode() for kind in _FINAL), _kept, _events),
    hold=Hold(((None,), ("max_output_tokens", "max_completion_tokens", "max_tokens"))),
    # a ChatGPT plan's spent limit is `usage_limit_reached`
    unavailable=Unavailable(quota=(*openai_family.QUOTA, "usage_limit_reached")),
    key_test=CheapCall({"openai": "gpt-5-mini"}, _cheap_call),
    price_names=dated,
)
