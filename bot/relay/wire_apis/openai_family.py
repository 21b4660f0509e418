"""What OpenAI's two wire APIs (Responses, Chat Completions) share: the error object, the usage
counts, the key as a bearer token, and the providers that speak them. Not a record itself.

Besides OpenAI, the OpenAI-compatible providers OpenCode can run (its provider ids), each at its
own API root (xai's SDK speaks Responses as well).
"""
from __future__ import annotations

from typing import Any

from bot.relay.call_usage import CallUsage, count, mapping

KEY_HEADER = "authorization"
ROOTS = {"openai": "https://api.openai.com", "openrouter": "https://openrouter.ai/api",
         "groq": "https://api.groq.com/openai", "mistral": "https://api.mistral.ai", "xai": "https://api.x.ai",
         "deepseek": "https://api.deepseek.com"}
_CODES = {401: "invalid_api_key", 403: "permission_denied", 404: "not_found", 429: "rate_limit_exceeded"}
QUOTA = ("insufficient_quota",)  # a 429 of an account whose quota is spent


def roots(*providers: str) -> dict[str, str]:
    return {provider: ROOTS[provider] for provider in providers}


def error(status: int, message: str, code: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                      "param": None, "code": _CODES.get(status, code)}}


def usage(counts: dict[str, Any], prompt: str, completion: str) -> CallUsage:
    """Responses (input_tokens/output_tokens) and Chat Completions (prompt_tokens/completion_tokens).
    The prompt count includes the cache reads and writes its details break out; the completion
    count includes the reasoning."""
    details = mapping(counts.get(f"{prompt}_details"))
    cached, writes = count(details.get("cached_tokens")), count(details.get("cache_write_tokens"))
    long_writes = min(writes, count(mapping(details.get("cache_write_tokens_details")).get("ttl_12h_tokens")))
    return CallUsage(input_tokens=max(0, count(counts.get(prompt)) - cached - writes), cached_tokens=cached,
                     cache_write_tokens=writes, long_cache_write_tokens=long_writes,
                     output_tokens=count(counts.get(completion)),
                     reasoning_tokens=count(mapping(counts.get(f"{completion}_details")).get("reasoning_tokens")))

