"""A fake model provider: a real HTTP server on 127.0.0.1 that speaks the four wire APIs
the agent CLIs use (listed below), scripted per test.

APIs (the `api` name each recorded request carries):
  anthropic  POST /v1/messages[?beta=true] (SSE or JSON), HEAD /, /v1/messages/count_tokens
  responses  POST /v1/responses (SSE or JSON)              -- Codex (`input` a list of items or a string)
  chat       POST /v1/chat/completions (SSE or JSON)       -- OpenCode (a stream's usage only when asked)
  gemini     POST /v1beta/models/M:streamGenerateContent?alt=sse and :generateContent

Usage:
    from tests.fakes.provider import FakeProvider, say, call, fail
    with FakeProvider() as fake:                 # binds 127.0.0.1 on a random port
        fake.script(call("write_file", {"path": "a.txt", "content": "hi"}), say("done"))
        ... point the CLI at fake.url (BOT_<AGENT>_BASE_URL) ...
        fake.requests            # every request, in order: Request objects (see below)
        fake.main_requests()     # without auxiliary ones (OpenCode titles, Gemini router)

Script: a FIFO of turns shared by all APIs; each main model request pops one turn.
  say(text)              answer with text (end of turn)
  call(tool, args)       answer with one tool call. `tool` is matched against the tools the
                         CLI offered: the exact name (mcp__bot__write_file, bot_write_file,
                         mcp_bot_write_file, Codex's "mcp__bot::write_file") or a bare suffix
                         ("write_file") resolved to the one offered name ending in it. When no
                         offered tool matches, the reply is the text
                         "NO_TOOL_OFFERED <tool> tools=[...]" so the test sees why.
  bridged(tool, args)    call() of the MCP server "bot"'s own tool (`@bot/<tool>`): never a native
                         tool of the same name (Gemini offers its own read_file beside the bridge's).
  fail(status, message, retry_after=None)
                         answer with an HTTP error in that API's own error format (429 and 529 with
                         the provider's rate-limit / overloaded error types, and a Retry-After header
                         when given).
  quota(message, retry_after=None)
                         a 429 saying the account's quota is used up, in the API's own shape
                         (OpenAI's `insufficient_quota` type and code, Gemini's RESOURCE_EXHAUSTED).
  exec_js(source)        Codex code mode: answer with a call of the JavaScript `exec` tool
                         (a Responses `custom_tool_call`) running `source`.
Codex's default model runs in "code mode": the request's `tools`
list is empty, tools arrive in an `additional_tools` input item, and most of them are only
reachable as `tools.<name>(...)` inside `exec`. The fake does what that model does: a scripted
`call(tool)` whose tool is offered directly becomes a plain function call; one reachable only
inside `exec` becomes an `exec` call whose JavaScript calls it and returns its result. A tool
that is only deferred (named under "Deferred tool namespaces", which a model would first have
to search for) is not offered: the reply is NO_TOOL_OFFERED.
Usage: every reply reports `fake.usage` (a FakeUsage: uncached input, cache reads, cache writes,
output including reasoning, reasoning) in each API's own fields; say(text, usage=FakeUsage(...))
overrides it for one turn, say(text, pieces=n) streams the text as n deltas.
When the queue is empty the provider echoes, as the recorded fixtures do:
  "MOCK_ANSWER[<api>] prior_assistant_turns=<n> last_user=<text>" or, after a tool result,
  "MOCK_ANSWER[<api>] prior_assistant_turns=<n> tool_result=<first 200 chars>".

Outages: `fake.outage(fail(529, "Overloaded"), api="anthropic")` (or `key=` a credential) answers every
model request of that API (or carrying that key) with that turn, auxiliary ones included, without
consuming the script, until `fake.outages.clear()`: one vendor down while another answers.

Request fields: api, method, path, headers, body (parsed JSON), auxiliary (bool), reply (the
Turn answered), and helpers prior_assistant_turns, last_user_text, tool_result, offered_tools
(what the model can call directly), nested_tools (reachable only inside Codex's `exec`),
provider_tools (tools the provider itself would run, such as web search).
Auxiliary requests (OpenCode's title generation, Gemini's JSON-schema router/next-speaker
calls) are answered automatically and never consume a scripted turn.
A ChatGPT login (Codex's auth.json): `fake.login = FakeLogin(...)` makes the fake stand as ChatGPT's
Codex backend (POST /backend-api/codex/responses, the Responses API; GET /backend-api/codex/models),
which answers 401 without the login's current access token and account id, and as its token
endpoint (POST /oauth/token, Codex's refresh request), which rotates the tokens.
`fake.login.auth_json()` is the login as `codex login` writes it.
"""
from __future__ import annotations

import base64
import gzip
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE_IN, USAGE_OUT = 10, 5
_ids = itertools.count(1)


@dataclass(frozen=True)
class FakeUsage:
    """Known usage for a reply. `input` excludes cache reads (`cached`) and writes (`cache_write`);
    `output` includes `reasoning`. Each API reports it in its own convention."""

    input: int = USAGE_IN
    output: int = USAGE_OUT
    cached: int = 0
    cache_write: int = 0
    reasoning: int = 0
    long_cache_write: int = 0  # the part of cache_write kept longer (Anthropic 1 hour, OpenAI 12 hours)


@dataclass
class Turn:
    kind: str  # text | tool | fail
    text: str = ""
    tool: str = ""
    args: dict = field(default_factory=dict)
    status: int = 200
    usage: FakeUsage | None = None
    pieces: int = 1  # streamed text deltas
    retry_after: str | None = None
    code: str | None = None  # an OpenAI error's type and code (insufficient_quota) instead of the status's


def say(text: str, usage: FakeUsage | None = None, pieces: int = 1) -> Turn:
    return Turn("text", text=text, usage=usage, pieces=pieces)


def call(tool: str, args: dict | None = None) -> Turn:
    return Turn("tool", tool=tool, args=dict(args or {}))


def bridged(tool: str, args: dict | None = None, server: str = "bot") -> Turn:
    """call() of the bridge's own tool, whatever native tool shares its name."""
    return call(f"@{server}/{tool}", args)


def fail(status: int = 400, message: str = "mock forced failure", retry_after: str | None = None) -> Turn:
    return Turn("fail", text=message, status=status, retry_after=retry_after)


def quota(message: str = "You exceeded your current quota, please check your plan and billing details.",
          retry_after: str | None = None) -> Turn:
    return Turn("fail", text=message, status=429, retry_after=retry_after, code="insufficient_quota")


def exec_js(source: str) -> Turn:
    return Turn("exec", text=source)


@dataclass
class Request:
    api: str
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    auxiliary: bool = False
    reply: Turn | None = None

    @property
    def prior_assistant_turns(self) -> int:
        return sum(1 for m in _messages(self) if m.get("role") in ("assistant", "model"))

    @property
    def offered_tools(self) -> list[str]:
        return _offered_tools(self.api, self.body)

    @property
    def nested_tools(self) -> list[str]:
        return _nested_tools(self.api, self.body)

    @property
    def provider_tools(self) -> list[str]:
        return _provider_tools(self.api, self.body)

    @property
    def last_user_text(self) -> str:
        return _last_user_text(self)

    @property
    def tool_result(self) -> str | None:
        return _tool_result(self)


# ---------------------------------------------------------------- reading requests

def input_items(body: Any) -> list[dict]:
    """A Responses request's `input` as items: a plain string is one user message, as the API reads it."""
    value = body.get("input") if isinstance(body, dict) else None
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    return [item for item in value or [] if isinstance(item, dict)]


def _messages(req: Request) -> list[dict]:
    body = req.body if isinstance(req.body, dict) else {}
    if req.api == "responses":  # a message item may leave out its type (the API's "easy" input message)
        return [i for i in input_items(body) if i.get("type", "message") == "message" and "role" in i]
    if req.api == "gemini":
        return body.get("contents", [])
    return [m for m in body.get("messages", []) if m.get("role") != "system"]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    out = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out


def _last_user_text(req: Request) -> str:
    for message in reversed(_messages(req)):
        if message.get("role") != "user":
            continue
        texts = _texts(message.get("parts") if req.api == "gemini" else message.get("content"))
        texts = [t for t in texts if not t.lstrip().startswith(
            ("<system-reminder>", "<environment_context>", "<session_context>"))]
        if texts:
            return texts[-1].strip()
    return ""


def _tool_result(req: Request) -> str | None:
    body = req.body if isinstance(req.body, dict) else {}
    if req.api == "responses":
        last = (input_items(body) or [{}])[-1]
        if last.get("type") not in _RESPONSES_OUTPUTS:
            return None
        output = last.get("output")  # code mode's exec answers with a list of content items
        return "\n".join(_texts(output)) if isinstance(output, list) else str(output)
    if req.api == "chat":
        last = (body.get("messages") or [{}])[-1]
        return str(last.get("content")) if last.get("role") == "tool" else None
    if req.api == "gemini":
        parts = ((body.get("contents") or [{}])[-1]).get("parts", [])
        found = [p["functionResponse"].get("response") for p in parts if "functionResponse" in p]
        return json.dumps(found[0]) if found else None
    content = ((body.get("messages") or [{}])[-1]).get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            inner = block.get("content")
            return inner if isinstance(inner, str) else json.dumps(inner)
    return None


_RESPONSES_OUTPUTS = ("function_call_output", "custom_tool_call_output")
_NESTED = re.compile(r"declare const tools: \{ (\w+)\(")
# Tools the provider runs on its own servers (never through the CLI, the bridge or the proxy).
_PROVIDER_TOOL_TYPES = ("web_search", "web_search_preview", "image_generation", "code_interpreter",
                        "file_search", "computer_use_preview")
_GEMINI_PROVIDER_TOOLS = ("googleSearch", "googleSearchRetrieval", "urlContext", "codeExecution")


def _declared(api: str, body: Any) -> list[dict]:
    if not isinstance(body, dict):
        return []
    tools = list(body.get("tools") or [])
    if api == "responses":  # code-mode Codex models announce tools in an input item instead
        tools += [t for item in input_items(body) if item.get("type") == "additional_tools"
                  for t in item.get("tools") or []]
    return [t for t in tools if isinstance(t, dict)]


def _nested_tools(api: str, body: Any) -> list[str]:
    """Tools Codex's code mode describes as callable only inside the `exec` tool."""
    if api != "responses":
        return []
    execs = [t for ns in _declared(api, body) if ns.get("type") == "namespace"
             for t in ns.get("tools") or [] if t.get("name") == "exec"]
    return _NESTED.findall(execs[0].get("description") or "") if execs else []


def _provider_tools(api: str, body: Any) -> list[str]:
    tools = _declared(api, body)
    if api == "gemini":
        return [key for t in tools for key in t if key in _GEMINI_PROVIDER_TOOLS]
    return [str(t.get("type")) for t in tools if str(t.get("type", "")).startswith(_PROVIDER_TOOL_TYPES)]


def _offered_tools(api: str, body: Any) -> list[str]:
    tools = _declared(api, body)
    names: list[str] = []
    for tool in tools:
        if api == "gemini":
            names += [d["name"] for d in tool.get("functionDeclarations", [])]
        elif api == "chat":
            names.append(tool.get("function", {}).get("name", ""))
        elif tool.get("type") == "namespace":
            names += [f"{tool['name']}::{t['name']}" for t in tool.get("tools", [])]
        elif tool.get("name"):
            names.append(tool["name"])
    return [n for n in names if n]


def resolve_tool(wanted: str, offered: list[str]) -> str | None:
    """The offered name for a scripted tool: exact, else the one name ending in it. `@bot/read_file`
    names the MCP server's own tool only, never a native namesake (Gemini's own `read_file`)."""
    if wanted.startswith("@"):
        server, _, tool = wanted[1:].partition("/")
        names = {f"{prefix}{server}{sep}{tool}" for prefix in ("", "mcp_", "mcp__") for sep in ("_", "__", "::")}
        matches = [n for n in offered if n in names]
        return matches[0] if len(matches) == 1 else None
    if wanted in offered:
        return wanted
    matches = [n for n in offered if n.endswith(wanted) and n[: -len(wanted)][-1:] in ("_", ":")]
    return matches[0] if len(matches) == 1 else None


def nested_call(tool: str, args: dict) -> str:
    """The JavaScript a code-mode model writes to call one nested tool and show its result.
    A freeform tool (apply_patch) takes its text: args {"input": text} pass the string."""
    argument = args["input"] if set(args) == {"input"} else args
    return (f"const result = await tools.{tool}({json.dumps(argument)});\n"
            "text(typeof result === 'string' ? result : JSON.stringify(result));\n")


def _is_auxiliary(req: Request) -> bool:
    body = req.body if isinstance(req.body, dict) else {}
    if req.api == "chat":
        system = " ".join(t for m in body.get("messages", []) if m.get("role") == "system"
                          for t in _texts(m.get("content")))
        return "title generator" in system
    if req.api == "gemini":
        if (body.get("generationConfig") or {}).get("responseMimeType") == "application/json":
            return True
    return _opencode_title_call(req.api, body)


def _opencode_title_call(api: str, body: dict) -> bool:
    """OpenCode's title-generation call on its own providers (Anthropic, Gemini, Responses): its
    system prompt names a title generator."""
    if api == "anthropic":
        system = body.get("system")
    elif api == "gemini":
        system = (body.get("systemInstruction") or {}).get("parts")
    elif api == "responses":
        system = [{"text": body.get("instructions") or ""}] + [
            {"text": t} for i in input_items(body) if i.get("role") in
            ("system", "developer") for t in _texts(i.get("content"))]
    else:
        return False
    return any("title generator" in text for text in _texts(system))


def _schema_value(schema: dict) -> Any:
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        return {k: ("user" if k == "next_speaker" else _schema_value(v))
                for k, v in (schema.get("properties") or {}).items()}
    if kind in ("integer", "number"):
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return "fake"


def _auxiliary_reply(req: Request) -> Turn:
    if req.api == "gemini":
        schema = req.body["generationConfig"].get("responseJsonSchema") or \
            req.body["generationConfig"].get("responseSchema") or {}
        return say(json.dumps(_schema_value(schema)))
    return say("Fake title")


# ---------------------------------------------------------------- writing replies

def _sse(events: list[tuple[str | None, dict | str]]) -> bytes:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _anthropic(turn: Turn, model: str, stream: bool, usage: FakeUsage) -> tuple[str, bytes]:
    n = next(_ids)
    if turn.kind == "tool":
        block = {"type": "tool_use", "id": f"toolu_fake_{n}", "name": turn.tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(turn.args)}
        stop, full = "tool_use", dict(block, input=turn.args)
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": turn.text}
        stop, full = "end_turn", {"type": "text", "text": turn.text}
    deltas = [delta] if turn.kind == "tool" else [dict(delta, text=t) for t in _split(turn.text, turn.pieces)]
    prompt = {"input_tokens": usage.input}
    prompt |= {"cache_read_input_tokens": usage.cached} if usage.cached else {}
    if usage.cache_write:
        prompt |= {"cache_creation_input_tokens": usage.cache_write, "cache_creation": {
            "ephemeral_5m_input_tokens": usage.cache_write - usage.long_cache_write,
            "ephemeral_1h_input_tokens": usage.long_cache_write}}
    message = {"id": f"msg_fake_{n}", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": dict(prompt, output_tokens=1)}
    if not stream:
        return "application/json", json.dumps(dict(message, content=[full], stop_reason=stop,
                                                    usage=dict(prompt, output_tokens=usage.output))).encode()
    return "text/event-stream", _sse([
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("ping", {"type": "ping"}),
        *[("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d}) for d in deltas],
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": usage.output}}),
        ("message_stop", {"type": "message_stop"})])


def _openai_usage(usage: FakeUsage, prompt: str, completion: str) -> dict:
    """OpenAI's convention: the prompt count includes cache reads and writes, the completion count reasoning."""
    prompt_count = usage.input + usage.cached + usage.cache_write
    out = {prompt: prompt_count, completion: usage.output, "total_tokens": prompt_count + usage.output}
    if usage.cached or usage.cache_write:
        out[f"{prompt}_details"] = {"cached_tokens": usage.cached, "cache_write_tokens": usage.cache_write}
    if usage.long_cache_write:
        out[f"{prompt}_details"]["cache_write_tokens_details"] = {
            "ttl_30m_tokens": usage.cache_write - usage.long_cache_write, "ttl_12h_tokens": usage.long_cache_write}
    if usage.reasoning:
        out[f"{completion}_details"] = {"reasoning_tokens": usage.reasoning}
    return out


def _responses_item(turn: Turn, n: int) -> tuple[dict, list[tuple[str, dict]]]:
    """The one output item of a reply and the stream events between its added and done events."""
    if turn.kind == "exec":
        item = {"id": f"ctc_fake_{n}", "type": "custom_tool_call", "status": "completed",
                "call_id": f"call_fake_{n}", "namespace": "functions", "name": "exec", "input": turn.text}
        return item, [("response.custom_tool_call_input.done",
                       {"item_id": item["id"], "output_index": 0, "input": turn.text})]
    if turn.kind == "tool":
        namespace, _, name = turn.tool.rpartition("::")
        item = {"id": f"fc_fake_{n}", "type": "function_call", "status": "completed",
                "call_id": f"call_fake_{n}", "name": name, "arguments": json.dumps(turn.args)}
        if namespace:
            item["namespace"] = namespace
        return item, [("response.function_call_arguments.done",
                       {"item_id": item["id"], "output_index": 0, "arguments": item["arguments"]})]
    part = {"type": "output_text", "text": turn.text, "annotations": [], "logprobs": []}
    item = {"id": f"msg_fake_{n}", "type": "message", "role": "assistant", "status": "completed", "content": [part]}
    where = {"item_id": item["id"], "output_index": 0, "content_index": 0}
    return item, [("response.content_part.added", dict(where, part=dict(part, text=""))),
                  *[("response.output_text.delta", dict(where, delta=t, logprobs=[]))
                    for t in _split(turn.text, turn.pieces)],
                  ("response.output_text.done", dict(where, text=turn.text, logprobs=[])),
                  ("response.content_part.done", dict(where, part=part))]


def _response_object(n: int, model: str, body: dict) -> dict:
    """A response object with the fields the API returns, the request's settings echoed."""
    return {"id": f"resp_fake_{n}", "object": "response", "created_at": 1_800_000_000, "status": "in_progress",
            "background": False, "error": None, "incomplete_details": None,
            "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
            "model": model, "output": [], "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": {"effort": None, "summary": None} | (body.get("reasoning") or {}),
            "store": body.get("store", True), "temperature": 1.0, "text": {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [], "top_p": 1.0,
            "truncation": "disabled", "usage": None, "user": None, "metadata": body.get("metadata") or {}}


def _responses(turn: Turn, model: str, usage: FakeUsage, body: dict) -> tuple[str, bytes]:
    """As the real API: a JSON response object unless the call asked for a stream; each stream event
    carries its `sequence_number`, and the created/in-progress/completed events the whole object."""
    n = next(_ids)
    item, middle = _responses_item(turn, n)
    response = _response_object(n, model, body)
    reported = {"input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens_details": {"reasoning_tokens": 0}}
    reported |= _openai_usage(usage, "input_tokens", "output_tokens")
    completed = dict(response, status="completed", output=[item], usage=reported)
    if not body.get("stream"):
        return "application/json", json.dumps(completed).encode()
    events = [("response.created", {"response": response}),
              ("response.in_progress", {"response": response}),
              ("response.output_item.added", {"output_index": 0, "item": dict(item, status="in_progress")}),
              *middle,
              ("response.output_item.done", {"output_index": 0, "item": item}),
              ("response.completed", {"response": completed})]
    return "text/event-stream", _sse([(name, dict(data, type=name, sequence_number=number))
                                      for number, (name, data) in enumerate(events)])


def _chat(turn: Turn, model: str, stream: bool, fake_usage: FakeUsage, include_usage: bool = False) -> tuple[str, bytes]:
    """As the real API: a stream reports its usage only when asked (`stream_options.include_usage`),
    then every chunk carries `"usage": null` and one more chunk with empty `choices` the usage."""
    n = next(_ids)
    if turn.kind == "tool":
        calls = [{"index": 0, "id": f"call_fake_{n}", "type": "function",
                  "function": {"name": turn.tool, "arguments": json.dumps(turn.args)}}]
        delta, finish = {"tool_calls": calls}, "tool_calls"
    else:
        delta, finish = {"content": turn.text}, "stop"
    usage = _openai_usage(fake_usage, "prompt_tokens", "completion_tokens")
    deltas = [delta] if turn.kind == "tool" else [{"content": t} for t in _split(turn.text, turn.pieces)]
    base = {"id": f"chatcmpl-fake-{n}", "created": 1_800_000_000, "model": model}
    if not stream:
        message = {"role": "assistant", "content": delta.get("content")}
        if "tool_calls" in delta:
            message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"} for c in calls]
        return "application/json", json.dumps(dict(base, object="chat.completion", usage=usage, choices=[
            {"index": 0, "message": message, "finish_reason": finish}])).encode()
    chunk = dict(base, object="chat.completion.chunk")
    choices = [[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}],
               *[[{"index": 0, "delta": d, "finish_reason": None}] for d in deltas],
               [{"index": 0, "delta": {}, "finish_reason": finish}]]
    usage_null = {"usage": None} if include_usage else {}
    return "text/event-stream", _sse([
        *[(None, dict(chunk, choices=c, **usage_null)) for c in choices],
        *([(None, dict(chunk, choices=[], usage=usage))] if include_usage else []),
        (None, "[DONE]")])


def _gemini(turn: Turn, model: str, stream: bool, usage: FakeUsage) -> tuple[str, bytes]:
    part = {"functionCall": {"name": turn.tool, "args": turn.args}} if turn.kind == "tool" \
        else {"text": turn.text}
    metadata = {"promptTokenCount": usage.input + usage.cached, "candidatesTokenCount": usage.output - usage.reasoning,
                "totalTokenCount": usage.input + usage.cached + usage.output}
    metadata |= {"cachedContentTokenCount": usage.cached} if usage.cached else {}
    metadata |= {"thoughtsTokenCount": usage.reasoning} if usage.reasoning else {}
    body = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                            "index": 0}],
            "usageMetadata": metadata, "modelVersion": model}
    if stream:
        texts = _split(turn.text, turn.pieces) if turn.kind != "tool" else []
        early = [{"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}, "index": 0}],
                  "modelVersion": model} for t in texts[:-1]]
        last = dict(body, candidates=[dict(body["candidates"][0], content={"role": "model", "parts": [
            {"text": texts[-1]} if texts else part]})])
        return "text/event-stream", _sse([(None, chunk) for chunk in early + [last]])
    return "application/json", json.dumps(body).encode()


_ANTHROPIC_ERRORS = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error",
                     500: "api_error", 529: "overloaded_error"}


_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
# OpenAI's (type, code) per status; other statuses are invalid requests without a code
_OPENAI_ERRORS = {401: ("invalid_request_error", "invalid_api_key"), 429: ("requests", "rate_limit_exceeded"),
                  500: ("server_error", None), 503: ("server_error", None)}


def _error_body(api: str, status: int, message: str, code: str | None = None) -> bytes:
    if api == "anthropic":
        kind = _ANTHROPIC_ERRORS.get(status, "invalid_request_error")
        body: dict = {"type": "error", "error": {"type": kind, "message": message}}
    elif api == "gemini":
        body = {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "INVALID_ARGUMENT")}}
    else:
        kind, known = (code, code) if code else _OPENAI_ERRORS.get(status, ("invalid_request_error", None))
        body = {"error": {"message": message, "type": kind, "param": None, "code": known}}
    return json.dumps(body).encode()


def _api_of(path: str) -> str | None:
    return next((api for prefix, api in ROUTES if path.startswith(prefix)), None)


# ---------------------------------------------------------------- a ChatGPT login

CHATGPT_RESPONSES = "/backend-api/codex/responses"  # Codex's model calls under a ChatGPT login
TOKEN_PATH = "/oauth/token"  # the login's token endpoint (BOT_CHATGPT_TOKEN_URL = fake.url + TOKEN_PATH)
# a POST's path prefix -> the API the fake answers it in; tests/relay/test_fake_provider_routes.py
# holds it to the wire APIs' records both ways (any GET is answered with an empty model list)
ROUTES = ((CHATGPT_RESPONSES, "responses"), ("/v1/messages", "anthropic"), ("/v1/responses", "responses"),
          ("/v1/chat/completions", "chat"), ("/v1beta/models/", "gemini"), ("/v1/models/", "gemini"))


def fake_jwt(claims: dict) -> str:
    """An unsigned JWT with these claims (Codex and the relay read claims, never check signatures)."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.fake"


@dataclass
class FakeLogin:
    """A ChatGPT login the fake accepts: ChatGPT's backend (/backend-api/...) answers 401 unless the
    call carries the current access token and account id; POST /oauth/token with the current
    refresh token (Codex's JSON request) issues new tokens and rotates the refresh token."""

    account_id: str = "acct-real-0001"
    lifetime_s: int = 3600  # the access token's exp, from when it is issued (negative: already expired)
    generation: int = 1
    refreshes: list[dict] = field(default_factory=list)  # each refresh request's JSON body

    @property
    def access_token(self) -> str:
        return fake_jwt({"exp": self._issued + self.lifetime_s, "gen": self.generation,
                         "secret": f"at-real-{self.generation}-{self.account_id}"})

    @property
    def refresh_token(self) -> str:
        return f"rt-real-{self.generation}-0123456789"

    def __post_init__(self) -> None:
        self._issued = int(time.time())

    def auth_json(self) -> str:
        """The login as `codex login` writes it."""
        id_token = fake_jwt({"email": "dev@example.com", "https://api.openai.com/auth": {
            "chatgpt_plan_type": "plus", "chatgpt_account_id": self.account_id}})
        return json.dumps({"OPENAI_API_KEY": None, "last_refresh": "2026-11-01T00:00:00Z", "tokens": {
            "id_token": id_token, "access_token": self.access_token, "refresh_token": self.refresh_token,
            "account_id": self.account_id}})

    def admits(self, headers: dict) -> bool:
        lowered = {k.lower(): v for k, v in headers.items()}
        return (lowered.get("authorization") == f"Bearer {self.access_token}"
                and lowered.get("chatgpt-account-id") == self.account_id)

    def refresh(self, body: Any) -> dict | None:
        """New tokens for a valid refresh request, else None (invalid_grant)."""
        self.refreshes.append(body if isinstance(body, dict) else {})
        if not isinstance(body, dict) or body.get("grant_type") != "refresh_token" or \
                body.get("refresh_token") != self.refresh_token:
            return None
        self.generation += 1
        self.lifetime_s, self._issued = 3600, int(time.time())
        return {"access_token": self.access_token, "refresh_token": self.refresh_token,
                "id_token": fake_jwt({"gen": self.generation}), "token_type": "Bearer", "expires_in": 3600}


# ---------------------------------------------------------------- the server

class FakeProvider:
    """The scriptable provider; see the module docstring."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        self.usage = FakeUsage()  # what every reply reports unless its turn says otherwise
        self._queue: list[Turn] = []
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.login: FakeLogin | None = None  # set to stand as ChatGPT's backend for a login
        self.keep_alive = False  # True: connections stay open between calls, as a provider's do
        self.outages: list[tuple[str | None, str | None, Turn]] = []  # (api, key, failing turn)
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FakeProvider:
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def script(self, *turns: Turn) -> FakeProvider:
        with self._lock:
            self._queue.extend(turns)
        return self

    def outage(self, turn: Turn, *, api: str | None = None, key: str | None = None) -> FakeProvider:
        """Every request of `api` (or carrying `key`) answers `turn`, a fail(), until cleared."""
        with self._lock:
            self.outages.append((api, key, turn))
        return self

    def _out(self, req: Request) -> Turn | None:
        carried = " ".join(str(v) for k, v in req.headers.items()
                           if k.lower() in ("x-api-key", "authorization", "x-goog-api-key", "api-key"))
        for api, key, turn in self.outages:
            if (api is None or api == req.api) and (key is None or key in carried):
                return turn
        return None

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def main_requests(self, api: str | None = None) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if not r.auxiliary and r.reply is not None
                    and (api is None or r.api == api)]

    def answer(self, req: Request) -> Turn:
        """Decide the reply for one model request (records it)."""
        with self._lock:
            self.requests.append(req)
            if (down := self._out(req)) is not None:
                req.reply = down
                return down
            if _is_auxiliary(req):
                req.auxiliary, req.reply = True, _auxiliary_reply(req)
                return req.reply
            turn = self._queue.pop(0) if self._queue else None
        req.reply = self._realise(req, turn)
        return req.reply

    @staticmethod
    def _realise(req: Request, turn: Turn | None) -> Turn:
        if turn is None:
            result = req.tool_result
            tail = f"tool_result={result[:200]}" if result is not None else f"last_user={req.last_user_text}"
            return say(f"MOCK_ANSWER[{req.api}] prior_assistant_turns={req.prior_assistant_turns} {tail}")
        offered = req.offered_tools
        if turn.kind == "exec":
            return turn if resolve_tool("exec", offered) else say(f"NO_TOOL_OFFERED exec tools=[{', '.join(offered)}]")
        if turn.kind != "tool":
            return turn
        name = resolve_tool(turn.tool, offered)
        if name is not None:
            return call(name, turn.args)
        if turn.tool in req.nested_tools and resolve_tool("exec", offered):
            return exec_js(nested_call(turn.tool, turn.args))
        return say(f"NO_TOOL_OFFERED {turn.tool} tools=[{', '.join(offered)}]")

    def record_other(self, method: str, path: str, headers: dict) -> None:
        with self._lock:
            self.requests.append(Request("other", method, path, headers, None))


def _handler_for(fake: FakeProvider):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: on a kept connection Nagle holds the second

        def log_message(self, *args) -> None:  # keep test output clean
            pass

        def _send(self, status: int, ctype: str, body: bytes, headers: dict | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            if not fake.keep_alive:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.close_connection = not fake.keep_alive

        def do_HEAD(self) -> None:
            fake.record_other("HEAD", self.path, dict(self.headers))
            self._send(200, "text/plain", b"")

        def do_GET(self) -> None:
            fake.record_other("GET", self.path, dict(self.headers))
            if self._refused_login():
                return
            self._send(200, "application/json", json.dumps({"object": "list", "data": [], "models": []}).encode())

        def do_POST(self) -> None:
            try:
                self._post()
            except Exception as exc:  # a fake bug must show as a 500, not a hung CLI
                self._send(500, "application/json", json.dumps({"error": {"message": repr(exc)}}).encode())

        def _refused_login(self) -> bool:
            """ChatGPT's backend without the login's current tokens: 401, as ChatGPT answers."""
            if fake.login is None or not self.path.startswith("/backend-api/") or fake.login.admits(dict(self.headers)):
                return False
            self._send(401, "application/json", json.dumps({"detail": "Unauthorized", "error": {
                "type": "invalid_request_error", "code": "token_expired", "message": "expired"}}).encode())
            return True

        def _token(self, body: Any) -> None:
            fake.record_other("POST", self.path, dict(self.headers))
            issued = fake.login.refresh(body) if fake.login else None
            if issued is None:
                return self._send(400, "application/json", b'{"error":"invalid_grant"}')
            self._send(200, "application/json", json.dumps(issued).encode())

        def _post(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding", "").lower() == "gzip":
                raw = gzip.decompress(raw)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = None
            if self.path == TOKEN_PATH:
                return self._token(body)
            if self._refused_login():
                fake.record_other("POST", self.path, dict(self.headers))
                return
            api = _api_of(self.path)
            if self.path.endswith("count_tokens") or self.path.endswith(":countTokens"):
                fake.record_other("POST", self.path, dict(self.headers))
                return self._send(200, "application/json", b'{"input_tokens":42,"totalTokens":42}')
            if api is None or not isinstance(body, dict):
                fake.record_other("POST", self.path, dict(self.headers))
                return self._send(404, "application/json", b'{"error":{"message":"not found"}}')
            req = Request(api, "POST", self.path, dict(self.headers), body)
            turn = fake.answer(req)
            if turn.kind == "fail":
                retry = {"Retry-After": turn.retry_after} if turn.retry_after else None
                return self._send(turn.status, "application/json",
                                  _error_body(api, turn.status, turn.text, turn.code), retry)
            self._send(200, *_render(api, self.path, body, turn, turn.usage or fake.usage))

    return Handler


def _render(api: str, path: str, body: dict, turn: Turn, usage: FakeUsage) -> tuple[str, bytes]:
    model = str(body.get("model") or path.split("/models/")[-1].split(":")[0] or "fake-model")
    if api == "anthropic":
        return _anthropic(turn, model, bool(body.get("stream")), usage)
    if api == "responses":
        return _responses(turn, model, usage, body)
    if api == "chat":
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and options.get("include_usage") is True
        return _chat(turn, model, bool(body.get("stream")), usage, include_usage)
    return _gemini(turn, model, "streamGenerateContent" in path, usage)
