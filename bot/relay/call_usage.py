"""The tokens of one model call, normalised whatever the API's convention (bot/relay/usage.py reads
them from a reply; each wire API's record says how, bot/relay/wire_apis/):

  input_tokens        prompt tokens read fresh (billed at the input price)
  cached_tokens       prompt tokens read from the provider's cache (the cached price)
  cache_write_tokens  prompt tokens written to the cache (the cache-write price)
  long_cache_write_tokens  the part of cache_write_tokens written for the longer retention
                      (the long cache-write price)
  output_tokens       generated tokens, reasoning included (the output price)
  reasoning_tokens    the part of output_tokens the model spent thinking (shown, not billed again)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class CallUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    long_cache_write_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cached_tokens + self.cache_write_tokens + self.output_tokens

    def as_dict(self) -> dict[str, Any]:
        # by hand: dataclasses.asdict copies each field deeply, a tenth of recording a call
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cached_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
                "reasoning_tokens": self.reasoning_tokens, "long_cache_write_tokens": self.long_cache_write_tokens}


def count(value: object) -> int:
    """A token count as a provider wrote it: a positive whole number, else 0."""
    return value if isinstance(value, int) and value > 0 else 0


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def model_of(body: dict[str, Any]) -> str | None:
    """The model a reply names (`model`, or Gemini-style `modelVersion`)."""
    model = body.get("model") or body.get("modelVersion")
    return model if isinstance(model, str) else None
