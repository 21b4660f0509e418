"""What the relay lets through in a request body. Every body it forwards is parsed here and what goes
upstream is that parse, serialised again: the provider reads exactly what the relay judged (no
second reading of a duplicated key, an escaped key name or a compressed body).

- A body that is not one JSON object is refused (400), and so is any request `Content-Encoding`
  (415): the relay cannot judge what it cannot read.
- Provider-run tools (the provider searches, fetches, runs code or calls a server on its own side,
  unseen by the egress proxy) pass only when the repository turned web access on; each one is then
  listed in `Checked.allowed` for the record. Without web access:
    * tools the provider runs are dropped from the request (`Checked.dropped`), so a CLI that always
      offers one keeps working without it: Anthropic server tools (every typed tool but the client-run
      computer/bash/text_editor/memory ones), every Responses tool but the client-run function, custom,
      namespace (its tools judged alike), local_shell, shell, apply_patch and tool_search ones (also in
      Codex's `additional_tools` item and a tool search's output),
      Chat Completions' `web_search_options` and OpenRouter/xAI search options, a `:online` model
      suffix, and every Gemini tool but function declarations;
    * the beta flags enabling them are removed from `anthropic-beta`;
    * connectors to a remote MCP server (Anthropic `mcp_servers`, a Responses `mcp` tool) are
      refused (400): they name a server and often a credential, no CLI sends one by default, and
      dropping one would hide the attempt.
- Then the request is read against the grammar of its API (bot/relay/grammar.py,
  bot/relay/request_grammar.py): unknown fields and parts are dropped, a part the provider would fetch
  (given by URL, or a file it holds) passes only with web access; each drop is in `Checked.dropped`.
  A model that searches the web on every call is refused (400) without web access.
- A streamed chat call always asks for its usage (`stream_options.include_usage`); when the client
  did not, `Checked.strip_usage` tells the relay to remove it again from the reply.
- `Checked.ceiling` is the most the call can cost: every byte of the body as an input token (a
  token is at least one byte) and the request's own output limit, else `DEFAULT_MAX_OUTPUT`.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from bot.errors import BotError
from bot.relay import grammar, request_grammar
from bot.relay.usage import CallUsage

# no request naming its output limit may produce more than this; at least every current model's
# documented maximum output (GPT-5: 128,000; Claude Opus: 128,000; Gemini 2.5: 65,536)
DEFAULT_MAX_OUTPUT = 128_000
_BETA_PREFIXES = (b"web-search-", b"web-fetch-", b"code-execution-", b"mcp-client-", b"files-api-", b"skills-")
_ANTHROPIC_CLIENT_TOOL = re.compile(r"^(custom|(computer|bash|text_editor|memory)_\d{8})$")
# Responses tools the client runs (`tool_search` searches only the request's own deferred tools); any
# other type is the provider's (web_search*, file_search, code_interpreter, computer*, image_generation, …)
_RESPONSES_CLIENT_TOOLS = frozenset({"function", "custom", "namespace", "local_shell", "shell", "apply_patch",
                                     "tool_search"})
# input items that declare tools for the next call: Codex's `additional_tools`, a client tool search's output
_RESPONSES_TOOL_ITEMS = frozenset({"additional_tools", "tool_search_output"})
_CHAT_PROVIDER_OPTIONS = ("web_search_options", "plugins", "search_parameters")
_GEMINI_CLIENT_KEYS = frozenset({"functionDeclarations", "function_declarations"})


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
          model: str | None = None, metered: bool = True) -> Checked:
    """The request as it may go upstream; raises BodyRefused for what may not."""
    for name, value in headers:
        if name == b"content-encoding" and value.strip().lower() != b"identity":
            raise BodyRefused(415, "encoded", "the model relay refuses a compressed request body "
                          f"(Content-Encoding: {value[:40].decode('latin-1')}); send it uncompressed")
    request = _parse(raw)
    judge = _Judge(web_access)
    _POLICIES[api](request, judge)
    named = request.get("model")
    model = model or (named if isinstance(named, str) else None)
    refusal = grammar.model_refusal(model, web_access=web_access)
    if refusal is not None:
        raise BodyRefused(400, "search_model", refusal)
    grammar.read(_GRAMMARS[api], request, judge)
    strip_usage = api == "chat" and _ask_for_usage(request)
    if api == "anthropic":
        headers = _without_beta_flags(headers, judge)
    body = orjson.dumps(request)
    ceiling = CallUsage(input_tokens=len(body), output_tokens=_max_output(api, request)) if metered else CallUsage()
    return Checked(body, headers, model, ceiling, strip_usage, judge.dropped, judge.allowed, request)


def _parse(raw: bytes) -> dict[str, Any]:
    try:
        request = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BodyRefused(400, "unreadable",
                          f"the model relay could not read the request body as JSON ({exc})") from None
    if not isinstance(request, dict):
        raise BodyRefused(400, "unreadable", "the model relay forwards only a JSON object as the request body")
    return request


def _ask_for_usage(request: dict[str, Any]) -> bool:
    """A streamed chat call reports its usage only when asked: always ask. True when the client had not."""
    if request.get("stream") is not True:
        return False
    options = request.get("stream_options")
    options = options if isinstance(options, dict) else {}
    if options.get("include_usage") is True:
        return False
    request["stream_options"] = {**options, "include_usage": True}
    return True


def _max_output(api: str, request: dict[str, Any]) -> int:
    """The request's output limit times the answers it asks for (chat `n`, Gemini `candidateCount`)."""
    config = request.get("generationConfig")
    config = config if isinstance(config, dict) else {}
    asked: Any
    answers: Any
    if api == "anthropic":
        asked, answers = request.get("max_tokens"), 1
    elif api == "chat":
        asked, answers = request.get("max_completion_tokens") or request.get("max_tokens"), request.get("n")
    elif api == "responses":
        asked, answers = request.get("max_output_tokens"), 1
    else:
        asked, answers = config.get("maxOutputTokens"), config.get("candidateCount")
    return (_positive(asked) or DEFAULT_MAX_OUTPUT) * (_positive(answers) or 1)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _without_beta_flags(headers: list[tuple[bytes, bytes]], judge: _Judge) -> list[tuple[bytes, bytes]]:
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


# ---------------------------------------------------------------- per API

def _filtered(holder: dict[str, Any], key: str, provider_run: Callable[[Any], str | None], judge: _Judge) -> bool:
    """Drops from holder[key] (a tool list) the provider-run tools the judge does not keep; an
    emptied list is removed. True when the list was removed."""
    tools = holder.get(key)
    if not isinstance(tools, list) or not tools:
        return False
    kept = [tool for tool in tools if (what := provider_run(tool)) is None or judge.keeps(what)]
    if len(kept) == len(tools):
        return False
    if kept:
        holder[key] = kept
        return False
    del holder[key]
    return True


def _anthropic(request: dict[str, Any], judge: _Judge) -> None:
    if "mcp_servers" in request:
        judge.connector("the MCP connector `mcp_servers`")

    def provider_run(tool: Any) -> str | None:
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind is None or (isinstance(kind, str) and _ANTHROPIC_CLIENT_TOOL.match(kind)):
            return None
        return f"provider-run tool {str(kind)[:80]}"

    if _filtered(request, "tools", provider_run, judge):
        request.pop("tool_choice", None)


def _responses_tool(tool: Any, judge: _Judge) -> str | None:
    kind = tool.get("type", "function") if isinstance(tool, dict) else "function"
    if kind == "mcp":
        judge.connector(f"the MCP connector {str(tool.get('server_label') or tool.get('server_url'))[:80]!r}")
        return None
    if kind == "namespace":  # its tools are declared inside it
        _filtered(tool, "tools", lambda inner: _responses_tool(inner, judge), judge)
    return None if isinstance(kind, str) and kind in _RESPONSES_CLIENT_TOOLS else f"provider-run tool {str(kind)[:80]}"


def _responses(request: dict[str, Any], judge: _Judge) -> None:
    if _filtered(request, "tools", lambda tool: _responses_tool(tool, judge), judge):
        request.pop("tool_choice", None)
    items = request.get("input")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and isinstance(item.get("type"), str) and item["type"] in _RESPONSES_TOOL_ITEMS:
            _filtered(item, "tools", lambda tool: _responses_tool(tool, judge), judge)


def _chat(request: dict[str, Any], judge: _Judge) -> None:
    for option in _CHAT_PROVIDER_OPTIONS:
        if option in request and not judge.keeps(f"provider-run option {option}"):
            del request[option]
    model = request.get("model")
    if isinstance(model, str) and model.endswith(":online") and not judge.keeps(f"provider-run web search ({model})"):
        request["model"] = model.removesuffix(":online")

    def provider_run(tool: Any) -> str | None:
        kind = tool.get("type", "function") if isinstance(tool, dict) else "function"
        return None if kind in ("function", "custom") else f"provider-run tool {str(kind)[:80]}"

    if _filtered(request, "tools", provider_run, judge):
        request.pop("tool_choice", None)


def _gemini(request: dict[str, Any], judge: _Judge) -> None:
    tools = request.get("tools")
    if not isinstance(tools, list):
        return
    kept = []
    for tool in tools:
        if not isinstance(tool, dict):
            kept.append(tool)
            continue
        remaining = {key: value for key, value in tool.items()
                     if key in _GEMINI_CLIENT_KEYS or judge.keeps(f"provider-run tool {key[:80]}")}
        if remaining or not tool:
            kept.append(remaining)
    if len(kept) != len(tools) or kept != tools:
        if kept:
            request["tools"] = kept
        else:
            del request["tools"]
            request.pop("toolConfig", None)


_POLICIES: dict[str, Callable[[dict[str, Any], _Judge], None]] = {
    "anthropic": _anthropic, "responses": _responses, "chat": _chat, "gemini": _gemini}
_GRAMMARS = {"anthropic": request_grammar.ANTHROPIC, "responses": request_grammar.RESPONSES,
             "chat": request_grammar.CHAT, "gemini": request_grammar.GEMINI}


def provider_run_items(checked: Checked) -> Iterable[tuple[str, str]]:
    """(outcome, what) for the record: each provider-run item dropped or allowed."""
    yield from (("dropped", what) for what in checked.dropped)
    yield from (("allowed", what) for what in checked.allowed)
