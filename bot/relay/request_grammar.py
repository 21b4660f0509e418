"""What the relay accepts in a request body, per API (read by bot/relay/grammar.py): every field and
every content part it knows, and what each may carry. Nothing else reaches the provider.

Kept to what the APIs document and the pinned CLIs send (tests/relay/test_e2e_request_grammar.py
runs each CLI through the relay and finds nothing removed). `tools` and the search options are
declared here and judged by bot/relay/body_policy.py (provider-run tools, connectors).
"""
from __future__ import annotations

from typing import Any

from bot.relay.grammar import PASS, Many, Obj, One, Ref, Union, Url, both, kind, obj, typed, web_only

HELD = Ref("a file the provider holds")


def _text(kind_name: str) -> Any:
    return lambda note: {"type": kind_name, "text": note}


def _provider_ran(*kinds: str) -> dict[str, Obj]:
    return {k: web_only(k, f"the result of a provider-run tool (`{k}`)") for k in kinds}


# ---------------------------------------------------------------- Anthropic Messages

_IMAGE_SOURCE = Union("image source", {
    "base64": kind("base64 source", "media_type", "data"),
    "url": kind("url source", url=Url("an image given by URL")),
    "file": kind("file source", file_id=HELD)}, typed)
_DOCUMENT_SOURCE = Union("document source", {
    "base64": kind("base64 source", "media_type", "data"),
    "text": kind("text source", "media_type", "data"),
    "url": kind("url source", url=Url("a document given by URL")),
    "file": kind("file source", file_id=HELD)}, typed)
_BLOCKS: dict[str, Obj] = {
    "text": kind("text block", "text", "cache_control", "citations"),
    "image": kind("image block", "cache_control", source=One(_IMAGE_SOURCE)),
    "thinking": kind("thinking block", "thinking", "signature"),
    "redacted_thinking": kind("redacted thinking block", "data"),
    "tool_use": kind("tool use block", "id", "name", "input", "cache_control", "caller"),
    "tool_reference": kind("tool reference block", "tool_name", "cache_control"),
    **_provider_ran("server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
                    "code_execution_tool_result", "bash_code_execution_tool_result",
                    "text_editor_code_execution_tool_result", "tool_search_tool_result", "mcp_tool_use",
                    "mcp_tool_result", "container_upload"),
}
_CONTENT = Union("content block", _BLOCKS, typed, _text("text"))
_DOCUMENT_SOURCE.members["content"] = kind("content source", content=Many(_CONTENT))
_BLOCKS.update({
    "document": kind("document block", "title", "context", "citations", "cache_control",
                     source=One(_DOCUMENT_SOURCE)),
    "search_result": kind("search result block", "source", "title", "citations", "cache_control",
                          content=Many(_CONTENT)),
    "tool_result": kind("tool result block", "tool_use_id", "is_error", "cache_control",
                        content=Many(_CONTENT, text=True)),
})
ANTHROPIC = obj("Messages request",
                "model", "max_tokens", "metadata", "stop_sequences", "stream", "temperature", "top_k", "top_p",
                "tools", "tool_choice", "thinking", "service_tier", "context_management", "output_config",
                "output_format", "mcp_servers", "speed", "inference_geo",
                system=Many(_CONTENT, text=True),
                messages=Many(obj("message", "role", content=Many(_CONTENT, text=True))),
                container=Ref("a code-execution container the provider holds"))

# ---------------------------------------------------------------- OpenAI Chat Completions

_CHAT_PART = Union("content part", {
    "text": kind("text part", "text", "cache_control"),
    "image_url": kind("image part", "cache_control",
                      image_url=One(obj("image", "detail", url=Url("an image given by URL")))),
    "input_audio": kind("audio part", "input_audio"),
    "file": kind("file part", "cache_control", file=One(obj("file", "filename", file_data=Url("a file given by URL"),
                                                            file_id=HELD))),
    "refusal": kind("refusal part", "refusal"),
}, typed, _text("text"))
CHAT = obj("Chat Completions request",
           "model", "max_tokens", "max_completion_tokens", "stream", "stream_options", "tools", "tool_choice",
           "parallel_tool_calls", "temperature", "top_p", "n", "stop", "presence_penalty", "frequency_penalty",
           "logit_bias", "logprobs", "top_logprobs", "seed", "response_format", "user", "metadata", "store",
           "reasoning_effort", "modalities", "audio", "prediction", "service_tier", "verbosity",
           "prompt_cache_key", "safety_identifier", "functions", "function_call",
           # judged by the body policy (provider-run search): declared so it is dropped there, and recorded
           "web_search_options", "plugins", "search_parameters",
           # the OpenAI-compatible providers' own (OpenRouter, Groq, Mistral, xAI, DeepSeek)
           "reasoning", "usage", "provider", "top_k", "min_p", "top_a", "repetition_penalty",
           "include_reasoning", "thinking", "safe_prompt", "random_seed",
           messages=Many(obj("message", "role", "name", "tool_calls", "tool_call_id", "function_call", "refusal",
                             "audio", "reasoning_content", "reasoning", "reasoning_details", "prefix",
                             content=Many(_CHAT_PART, text=True))))

# ---------------------------------------------------------------- OpenAI Responses

_RESPONSES_PART = Union("content part", {
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
}, typed, _text("input_text"))
_OUTPUT = Many(_RESPONSES_PART, text=True)
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
    **_provider_ran("web_search_call", "file_search_call", "computer_call", "computer_call_output",
                    "image_generation_call", "code_interpreter_call", "mcp_list_tools", "mcp_approval_request",
                    "mcp_approval_response", "mcp_call"),
}, lambda item: typed(item) or ("message" if "role" in item else None))
RESPONSES = obj("Responses request",
                "model", "tools", "tool_choice", "parallel_tool_calls", "reasoning", "store",
                "include", "prompt_cache_key", "prompt_cache_retention", "client_metadata", "text", "stream",
                "stream_options", "max_output_tokens", "max_tool_calls", "metadata", "previous_response_id",
                "conversation", "safety_identifier", "service_tier", "temperature", "top_p", "top_logprobs",
                "truncation", "user", "background", "context_management",
                input=Many(_ITEMS, text=True), instructions=Many(_ITEMS, text=True))

# ---------------------------------------------------------------- Gemini generateContent

_PART_META = ("thought", "thoughtSignature", "partMetadata", "videoMetadata", "mediaResolution")
_META_KEYS = frozenset(both(dict.fromkeys(_PART_META, PASS)))


def _gemini_part(name: str, **data: Any) -> Obj:
    return Obj(name, both({**dict.fromkeys(_PART_META, PASS), **data}))


def _data_kind(part: dict[str, Any]) -> str | None:
    """A Gemini part is told apart by its one data field (camelCase or snake_case); metadata alone
    (a thought signature) is a part of its own."""
    data = [key for key in part if key not in _META_KEYS]
    if not data:
        return "metadata"
    return _CAMEL.get(data[0]) if len(data) == 1 else None


_PARTS: dict[str, Obj] = {}
_GEMINI_PART = Union("generateContent part", _PARTS, _data_kind, lambda note: {"text": note})
_PARTS.update({
    "metadata": _gemini_part("metadata part"),
    "text": _gemini_part("text part", text=PASS),
    "inlineData": _gemini_part("inline data part", inlineData=PASS),
    "functionCall": _gemini_part("function call part", functionCall=PASS),
    "functionResponse": _gemini_part("function response part", functionResponse=One(Obj(
        "function response", both({"name": PASS, "id": PASS, "response": PASS, "willContinue": PASS,
                                   "scheduling": PASS, "parts": Many(_GEMINI_PART)})))),
    "fileData": _gemini_part("file part", fileData=One(Obj("file data", both({
        "mimeType": PASS, "displayName": PASS, "fileUri": Url("a file given by URI")})))),
    **_provider_ran("executableCode", "codeExecutionResult"),
})
_CAMEL = {spelling: camel for camel in _PARTS for spelling in both({camel: PASS})}
_CONTENTS = obj("content", "role", parts=Many(_GEMINI_PART))
GEMINI = Obj("generateContent request", both({
    "contents": Many(_CONTENTS), "systemInstruction": One(_CONTENTS), "tools": PASS, "toolConfig": PASS,
    "safetySettings": PASS, "generationConfig": PASS, "cachedContent": PASS, "labels": PASS, "model": PASS}))
GEMINI.keys.update(both({"generateContentRequest": One(GEMINI)}))  # countTokens wraps a whole request
