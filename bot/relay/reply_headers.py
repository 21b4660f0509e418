"""The provider's reply headers the CLI receives: an allowlist. A provider's reply carries what belongs
to the operator (OpenAI's `openai-organization` and `openai-project`, Anthropic's
`anthropic-organization-id`, cookies, a gateway's own headers); the sandbox gets only what a CLI
reads from a reply:

- the body's type (`content-type`), and its size when the relay passes it unchanged;
- when to retry (`retry-after`, `retry-after-ms`, `x-should-retry`: the providers' SDKs read them);
- the request's id for an error report (`request-id`, `x-request-id`);
- rate limits (`anthropic-ratelimit-*`, OpenAI's `x-ratelimit-*`, and the ChatGPT plan's windows
  Codex shows, `x-codex-primary-*` and `x-codex-secondary-*`).

Every other header is dropped, and so is an allowed one whose value carries the operator's key
(bot/relay/key_guard.py); the names dropped are recorded with the call. A `content-encoding` never
reaches this far: the relay asks for identity and refuses a compressed reply (it could not check it).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bot.relay.key_guard import KeyGuard

ALLOWED = frozenset({b"content-type", b"retry-after", b"retry-after-ms", b"x-should-retry", b"request-id",
                     b"x-request-id"})
ALLOWED_PREFIXES = (b"anthropic-ratelimit-", b"x-ratelimit-", b"x-codex-primary-", b"x-codex-secondary-")
NAME_CAP = 80  # a dropped name is recorded up to this many characters


def allowed(name: bytes) -> bool:
    lowered = name.lower()
    return lowered in ALLOWED or lowered.startswith(ALLOWED_PREFIXES)


@dataclass
class Down:
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    sized: bool = False  # the provider's Content-Length is kept (the body passes at its length)
    dropped: list[str] = field(default_factory=list)  # names, for the record
    withheld: list[str] = field(default_factory=list)  # allowed names whose value carried the key


def headers_down(raw: Iterable[tuple[bytes, bytes]], guard: KeyGuard, *, resized: bool = False) -> Down:
    """The headers of a reply as the CLI gets them. `resized`: the relay changes the body's length
    (then the server frames it itself)."""
    raw = list(raw)
    down = Down()
    chunked = resized or any(name.lower() == b"transfer-encoding" for name, _ in raw)
    # one gate over all the allowed values (a provider sends a dozen rate-limit headers): when it stays
    # shut, no value can carry the key, and none is looked at alone
    suspect = guard.might_carry(b"\n".join(value for name, value in raw if allowed(name)))
    for name, value in raw:
        lowered = name.lower()
        if lowered == b"content-length" and not chunked:
            down.headers.append((name, value))
            down.sized = True
        elif not allowed(name):
            if lowered not in (b"content-length", b"transfer-encoding", b"connection", b"keep-alive"):
                down.dropped.append(lowered[:NAME_CAP].decode("latin-1"))
        elif suspect and guard.carries(value):
            down.withheld.append(lowered[:NAME_CAP].decode("latin-1"))
        else:
            down.headers.append((name, value))
    down.dropped = sorted(set(down.dropped))
    return down
