"""What the relay knows of each provider API: the paths it forwards, where a key travels, and how
an error looks in that API's own format (so the CLI shows the model the relay's refusals).

APIs (`Route.api`) and their paths, nothing else is forwarded:
  anthropic  POST /v1/messages, /v1/messages/count_tokens          (provider "anthropic")
  responses  POST /v1/responses                                    (provider "openai")
  chat       POST /v1/chat/completions                             (provider "openai")
  gemini     POST /v1beta/models/<model>:generateContent | :streamGenerateContent | :countTokens
                                                                   (provider "google")
  responses  POST /backend-api/codex/responses, and models  GET /backend-api/codex/models
                                                                   (provider "chatgpt" only)
`HEAD /` (Claude Code's connectivity preflight) is answered by the relay itself.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

# provider -> (its API root, the APIs it is called with, where it takes its key upstream).
# Besides the three first-party APIs, the OpenAI-compatible providers OpenCode can run (its
# provider ids): reached at <root>/v1/chat/completions (xai's SDK speaks Responses).
PROVIDERS: dict[str, tuple[str, frozenset[str], str]] = {
    "anthropic": ("https://api.anthropic.com", frozenset({"anthropic"}), "x-api-key"),
    "openai": ("https://api.openai.com", frozenset({"responses", "chat"}), "authorization"),
    "google": ("https://generativelanguage.googleapis.com", frozenset({"gemini"}), "x-goog-api-key"),
    "openrouter": ("https://openrouter.ai/api", frozenset({"chat", "responses"}), "authorization"),
    "groq": ("https://api.groq.com/openai", frozenset({"chat", "responses"}), "authorization"),
    "mistral": ("https://api.mistral.ai", frozenset({"chat"}), "authorization"),
    "xai": ("https://api.x.ai", frozenset({"responses", "chat"}), "authorization"),
    "deepseek": ("https://api.deepseek.com", frozenset({"chat"}), "authorization"),
    # a Codex ChatGPT login: ChatGPT's Codex backend, reached only by its own paths (_CHATGPT)
    "chatgpt": ("https://chatgpt.com", frozenset(), "authorization"),
}
DEFAULT_BASE = {provider: root for provider, (root, _, _) in PROVIDERS.items()}
# where each provider takes its key (the relay's upstream side)
KEY_HEADER = {provider: header for provider, (_, _, header) in PROVIDERS.items()}
# the headers a client may carry a key in (the relay's inside): all are removed before forwarding
KEY_CARRIERS = (b"x-api-key", b"authorization", b"x-goog-api-key", b"api-key")
# query parameters that carry a key somewhere (compared lowercased, after percent-decoding): each
# must hold the episode's token, and none is forwarded
QUERY_KEY_CARRIERS = frozenset({"key", "api_key", "apikey", "api-key", "access_token", "token", "x-api-key",
                                "x-goog-api-key", "authorization"})


def serves(provider: str, route: Route) -> bool:
    """Whether `provider` is called with this route (the relay forwards nothing else to it)."""
    if route.only is not None:
        return provider == route.only
    return provider in PROVIDERS and route.api in PROVIDERS[provider][1]


_GEMINI = re.compile(rb"^/v1(?:beta)?/models/([A-Za-z0-9][A-Za-z0-9._-]{0,127}):"
                     rb"(generateContent|streamGenerateContent|countTokens)$")
_FIXED = {b"/v1/messages": "anthropic", b"/v1/messages/count_tokens": "anthropic",
          b"/v1/responses": "responses", b"/v1/chat/completions": "chat"}
CHATGPT_BASE = "/backend-api/codex"  # Codex's base URL under a ChatGPT login: <root>/backend-api/codex
# (method, path) -> api of ChatGPT's Codex backend: the Responses API, and the account's model list
_CHATGPT = {("POST", f"{CHATGPT_BASE}/responses".encode()): "responses",
            ("GET", f"{CHATGPT_BASE}/models".encode()): "models"}


@dataclass(frozen=True)
class Route:
    api: str
    model: str | None = None  # Gemini names the model in the path
    metered: bool = True  # count_tokens calls produce no usage
    only: str | None = None  # the one provider this path belongs to (ChatGPT's backend)


def route(method: str, raw_path: bytes) -> Route | None:
    """The API of a forwardable request, else None (the relay refuses it)."""
    chatgpt = _CHATGPT.get((method, raw_path))
    if chatgpt is not None:
        return Route(chatgpt, metered=chatgpt == "responses", only="chatgpt")
    if method != "POST":
        return None
    api = _FIXED.get(raw_path)
    if api:
        return Route(api, metered=not raw_path.endswith(b"count_tokens"))
    match = _GEMINI.match(raw_path)
    if match:
        return Route("gemini", match.group(1).decode(), metered=match.group(2) != b"countTokens")
    return None


def api_of_path(raw_path: bytes) -> str:
    """The API whose error format a refused path is answered in (best guess from its prefix)."""
    if raw_path.startswith(b"/v1/messages"):
        return "anthropic"
    if raw_path.startswith((b"/v1beta/", b"/v1/models/")):
        return "gemini"
    if raw_path.startswith(b"/v1/chat"):
        return "chat"
    return "responses"


_ANTHROPIC_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                    404: "not_found_error", 413: "request_too_large", 415: "invalid_request_error",
                    429: "rate_limit_error",
                    502: "api_error", 529: "overloaded_error"}
_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                  413: "INVALID_ARGUMENT", 415: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 502: "UNAVAILABLE"}
_OPENAI_TYPES = {401: "invalid_api_key", 403: "permission_denied", 404: "not_found", 429: "rate_limit_exceeded"}


def error_body(api: str, status: int, message: str, code: str = "relay") -> bytes:
    """`message` as the provider's own error object for `status`."""
    if api == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": _ANTHROPIC_TYPES.get(status, "api_error"),
                                                 "message": message}}
    elif api == "gemini":
        body = {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "INTERNAL")}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                          "param": None, "code": _OPENAI_TYPES.get(status, code)}}
    return json.dumps(body).encode()


def error_type(body: bytes) -> str:
    """The provider's error type or status word from an error body, for a message (never its text,
    which may quote part of the key)."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(error, dict):
        return ""
    found = error.get("type") or error.get("status") or error.get("code")
    return str(found)[:60] if isinstance(found, (str, int)) else ""
