"""OpenAI's Chat Completions API, as the model relay speaks it: POST /v1/chat/completions at OpenAI
and the OpenAI-compatible providers (OpenRouter, Groq, Mistral, xAI, DeepSeek), the key as a bearer
token. Everything the bot knows of it is here (bot/relay/wire_api.py reads it).

Provider-run: every tool but function and custom ones, `web_search_options` and OpenRouter's and
xAI's search options, a `:online` model suffix. A streamed call always asks for its usage
(`stream_options.include_usage`); when the client did not, the relay removes it from the reply.
Usage: the prompt count includes the cache reads; a stream's usage is in its one chunk with a
`usage` object (every other chunk says `"usage":null` when usage is asked for).
"""
from __future__ import annotations

from typing import Any

from bot.relay.call_usage import mapping, model_of
from bot.relay.grammar import HELD, Many, One, Union, Url, kind, obj, text_part, typed
from bot.relay.wire_api import (
    Body,
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

NAME = "chat"
_PROVIDER_OPTIONS = ("web_search_options", "plugins", "search_parameters")

# ---------------------------------------------------------------- the body's grammar

_PART = Union("content part", {
    "text": kind("text part", "text", "cache_control"),
    "image_url": kind("image part", "cache_control",
                      image_url=One(obj("image", "detail", url=Url("an image given by URL")))),
    "input_audio": kind("audio part", "input_audio"),
    "file": kind("file part", "cache_control", file=One(obj("file", "filename", file_data=Url("a file given by URL"),
                                                            file_id=HELD))),
    "refusal": kind("refusal part", "refusal"),
}, typed, text_part("text"))
GRAMMAR = obj("Chat Completions request",
              "model", "max_tokens", "max_completion_tokens", "stream", "stream_options", "tools", "tool_choice",
              "parallel_tool_calls", "temperature", "top_p", "n", "stop", "presence_penalty", "frequency_penalty",
              "logit_bias", "logprobs", "top_logprobs", "seed", "response_format", "user", "metadata", "store",
              "reasoning_effort", "modalities", "audio", "prediction", "service_tier", "verbosity",
              "prompt_cache_key", "safety_identifier", "functions", "function_call",
              # judged as provider-run search: declared so it is dropped there, and recorded
              "web_search_options", "plugins", "search_parameters",
              # the OpenAI-compatible providers' own (OpenRouter, Groq, Mistral, xAI, DeepSeek)
              "reasoning", "usage", "provider", "top_k", "min_p", "top_a", "repetition_penalty",
              "include_reasoning", "thinking", "safe_prompt", "random_seed",
              messages=Many(obj("message", "role", "name", "tool_calls", "tool_call_id", "function_call", "refusal",
                                "audio", "reasoning_content", "reasoning", "reasoning_details", "prefix",
                                content=Many(_PART, text=True))))


# ---------------------------------------------------------------- provider-run tools and usage

def _provider_run(request: dict[str, Any], judge: ToolJudge) -> None:
    for option in _PROVIDER_OPTIONS:
        if option in request and not judge.keeps(f"provider-run option {option}"):
            del request[option]
    model = request.get("model")
    if isinstance(model, str) and model.endswith(":online") and not judge.keeps(f"provider-run web search ({model})"):
        request["model"] = model.removesuffix(":online")

    def named(tool: Any) -> str | None:
        kind = tool.get("type", "function") if isinstance(tool, dict) else "function"
        return None if kind in ("function", "custom") else f"provider-run tool {str(kind)[:80]}"

    if without_provider_tools(request, "tools", named, judge):
        request.pop("tool_choice", None)


def _asks_usage(request: dict[str, Any]) -> bool:
    """A streamed call reports its usage only when asked: always ask. True when the client had not."""
    if request.get("stream") is not True:
        return False
    options = request.get("stream_options")
    options = options if isinstance(options, dict) else {}
    if options.get("include_usage") is True:
        return False
    request["stream_options"] = {**options, "include_usage": True}
    return True


def _reply(body: Any) -> UsageRead:
    body = mapping(body)
    counts = body.get("usage")
    return (openai_family.usage(counts, "prompt_tokens", "completion_tokens") if isinstance(counts, dict) else None,
            model_of(body))


def _kept(data: dict[str, Any]) -> str | None:
    return "usage" if isinstance(data.get("usage"), dict) else None


def _events(events: dict[str, dict[str, Any]]) -> UsageRead:
    return _reply(events.get("usage"))


WIRE_API = WireApi(
    name=NAME, title="OpenAI Chat Completions",
    key_header=openai_family.KEY_HEADER,
    providers=openai_family.roots("openai", "openrouter", "groq", "mistral", "xai", "deepseek"),
    paths=(Path("POST", b"/v1/chat/completions"),),
    error=openai_family.error, error_prefixes=(b"/v1/chat",),
    body=Body(GRAMMAR, _provider_run, asks_usage=_asks_usage),
    usage=UsageReading(_reply, (b'"usage":{', b'"usage": {'), _kept, _events),  # an object, not `"usage":null`
    hold=Hold(((None,), ("max_completion_tokens", "max_tokens", "max_output_tokens")), ((None,), ("n",))),
    unavailable=Unavailable(quota=openai_family.QUOTA),
    price_names=dated,
)
