"""Google's Gemini API (generateContent), as the model relay speaks it: POST
/v1beta/models/<model>:generateContent | :streamGenerateContent | :countTokens at
https://generativelanguage.googleapis.com, the key in `x-goog-api-key`. Everything the bot knows of
it is here (bot/relay/wire_api.py reads it).

Its JSON takes each field in lowerCamelCase and in snake_case, and a number written as a string.
Provider-run: every tool but function declarations. Usage: the prompt count includes the cache
reads, thinking is counted beside the candidates; a streamed JSON array counts by its last element
that carries `usageMetadata`.
"""
from __future__ import annotations

import re
from typing import Any

from bot.relay.call_usage import CallUsage, count, mapping, model_of
from bot.relay.grammar import PASS, Many, Obj, One, Union, Url, both, obj, provider_ran
from bot.relay.wire_api import (
    Body,
    CheapCall,
    Hold,
    ModelPath,
    ToolJudge,
    Unavailable,
    UsageRead,
    UsageReading,
    WireApi,
    dated,
)

NAME = "gemini"
_CLIENT_KEYS = frozenset({"functionDeclarations", "function_declarations"})
_CONFIG = ("generationConfig", "generation_config")

# ---------------------------------------------------------------- the body's grammar

_PART_META = ("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution")
_META_KEYS = frozenset(both(dict.fromkeys(_PART_META, PASS)))


def _part(name: str, **data: Any) -> Obj:
    return Obj(name, both({**dict.fromkeys(_PART_META, PASS), **data}))


def _data_kind(part: dict[str, Any]) -> str | None:
    """A part is told apart by its one data field (camelCase or snake_case); metadata alone (a
    thought signature) is a part of its own."""
    data = [key for key in part if key not in _META_KEYS]
    if not data:
        return "metadata"
    return _CAMEL.get(data[0]) if len(data) == 1 else None


_PARTS: dict[str, Obj] = {}
_PART = Union("generateContent part", _PARTS, _data_kind, lambda note: {"text": note})
_PARTS.update({
    "metadata": _part("metadata part"),
    "text": _part("text part", text=PASS),
    "inlineData": _part("inline data part", inlineData=PASS),
    "functionCall": _part("function call part", functionCall=PASS),
    "functionResponse": _part("function response part", functionResponse=One(Obj(
        "function response", both({"name": PASS, "id": PASS, "response": PASS, "willContinue": PASS,
                                   "scheduling": PASS, "parts": Many(_PART)})))),
    "fileData": _part("file part", fileData=One(Obj("file data", both({
        "mimeType": PASS, "displayName": PASS, "fileUri": Url("a file given by URI")})))),
    **provider_ran("executableCode", "codeExecutionResult"),
})
_CAMEL = {spelling: camel for camel in _PARTS for spelling in both({camel: PASS})}
_CONTENTS = obj("content", "role", parts=Many(_PART))
GRAMMAR = Obj("generateContent request", both({
    "contents": Many(_CONTENTS), "systemInstruction": One(_CONTENTS), "tools": PASS, "toolConfig": PASS,
    "safetySettings": PASS, "generationConfig": PASS, "cachedContent": PASS, "labels": PASS, "model": PASS}))
GRAMMAR.keys.update(both({"generateContentRequest": One(GRAMMAR)}))  # countTokens wraps a whole request


# ---------------------------------------------------------------- provider-run tools

def _provider_run(request: dict[str, Any], judge: ToolJudge) -> None:
    tools = request.get("tools")
    if not isinstance(tools, list):
        return
    kept = []
    for tool in tools:
        if not isinstance(tool, dict):
            kept.append(tool)
            continue
        remaining = {key: value for key, value in tool.items()
                     if key in _CLIENT_KEYS or judge.keeps(f"provider-run tool {key[:80]}")}
        if remaining or not tool:
            kept.append(remaining)
    if len(kept) != len(tools) or kept != tools:
        if kept:
            request["tools"] = kept
        else:
            del request["tools"]
            request.pop("toolConfig", None)


# ---------------------------------------------------------------- usage

def usage(meta: dict[str, Any]) -> CallUsage:
    cached = count(meta.get("cachedContentTokenCount"))
    thoughts = count(meta.get("thoughtsTokenCount"))
    prompt = count(meta.get("promptTokenCount")) + count(meta.get("toolUsePromptTokenCount"))
    return CallUsage(input_tokens=max(0, prompt - cached), cached_tokens=cached,
                     output_tokens=count(meta.get("candidatesTokenCount")) + thoughts, reasoning_tokens=thoughts)


def _reply(body: Any) -> UsageRead:
    if isinstance(body, list):  # a streamed JSON array: its last element that counts
        body = next((item for item in reversed(body) if isinstance(item, dict) and "usageMetadata" in item), {})
    body = mapping(body)
    meta = body.get("usageMetadata")
    return (usage(meta) if isinstance(meta, dict) else None), model_of(body)


def _kept(data: dict[str, Any]) -> str | None:
    return "usage" if isinstance(data.get("usageMetadata"), dict) else None


def _events(events: dict[str, dict[str, Any]]) -> UsageRead:
    return _reply(events.get("usage"))


# ---------------------------------------------------------------- errors and the key test

_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
           413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE"}


def _error(status: int, message: str, code: str) -> dict[str, Any]:
    return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "INTERNAL")}}


def _price_names(model: str) -> tuple[str, ...]:
    """A model as the price table lists it: a body or a reply may name it by its resource name
    (`models/gemini-2.5-flash`), and a dated snapshot is priced as its model."""
    return dated(model.removeprefix("models/"))


def _cheap_call(model: str, bearer: bool) -> tuple[str, dict[str, Any], dict[str, str]]:
    return (f"/v1beta/models/{model}:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": "ping"}]}], "generationConfig": {"maxOutputTokens": 1}},
            {})


WIRE_API = WireApi(
    name=NAME, title="Google Gemini",
    key_header="x-goog-api-key",
    providers={"google": "https://generativelanguage.googleapis.com"},
    paths=(ModelPath("POST", re.compile(rb"^/v1(?:beta)?/models/([A-Za-z0-9][A-Za-z0-9._-]{0,127}):"
                                        rb"(generateContent|streamGenerateContent|countTokens)$"),
                     unmetered=frozenset({b"countTokens"}),
                     shown="/v1beta/models/<model>:generateContent|streamGenerateContent|countTokens"),),
    error=_error, error_prefixes=(b"/v1beta/", b"/v1/models/"),
    body=Body(GRAMMAR, _provider_run),
    usage=UsageReading(_reply, (b"usageMetadata",), _kept, _events),
    hold=Hold((_CONFIG, ("maxOutputTokens", "max_output_tokens")), (_CONFIG, ("candidateCount", "candidate_count"))),
    unavailable=Unavailable(quota=("resource_exhausted",)),
    key_test=CheapCall({"google": "gemini-2.5-flash"}, _cheap_call),
    price_names=_price_names,
)
