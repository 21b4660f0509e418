"""A provider's reply before the relay passes it to the CLI: what it cannot check, or what quotes the
operator's key, does not go on.

- A compressed reply (any `Content-Encoding` but identity; the relay asks for identity) is replaced by
  a 502 in the API's format: the relay could neither read its usage nor look for the key in it.
- An error reply (status 400 and up) is read whole, up to ERROR_CAP bytes, and looked at with the
  masking layer (bot/relay/key_guard.py): a gateway that quotes the request in its error quotes the
  key with it. One that carries the key, in any form the masking layer knows, or is over the cap, is
  replaced by the relay's own error in the API's format, with the provider's status.
- A reply that passes streams on (the relay's `StreamMask` blanks the key in it, piece by piece).

`guarded` returns the reply to pass on and, when it replaced one, what it withheld, for the record.
"""
from __future__ import annotations

import httpx

from bot.relay import apis
from bot.relay.key_guard import KeyGuard

ERROR_CAP = 1 << 20  # an error body is a few hundred bytes; past this it is not passed on


async def guarded(response: httpx.Response, guard: KeyGuard, api: str) -> tuple[httpx.Response, str | None]:
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        await response.aclose()
        what = f"a reply compressed as {encoding[:40]!r}"
        return _replaced(api, 502, f"the provider sent {what}, which the model relay cannot check; "
                                   "it asked for an uncompressed reply"), what
    if response.status_code < 400:
        return response, None
    body = await _read_bounded(response)
    if body is None:
        return _replaced(api, response.status_code, f"the provider's error (HTTP {response.status_code}) was over "
                         f"{ERROR_CAP >> 20} MiB; the model relay withheld it"), "an error body over the cap"
    if guard.carries(body, thorough=True):
        return _replaced(api, response.status_code, f"the provider's error (HTTP {response.status_code}) quoted the "
                         "operator's credential; the model relay withheld it"), \
            f"the operator's credential in the provider's error body (HTTP {response.status_code})"
    headers = [(name, value) for name, value in response.headers.raw if name.lower() not in _FRAMING]
    headers.append((b"content-length", b"%d" % len(body)))
    return httpx.Response(response.status_code, headers=headers, stream=httpx.ByteStream(body)), None


_FRAMING = (b"content-length", b"transfer-encoding", b"content-encoding")


async def _read_bounded(response: httpx.Response) -> bytes | None:
    """The body, or None past the cap; a body the provider cut short is what came of it."""
    parts, size = [], 0
    try:
        async for piece in response.aiter_raw():
            size += len(piece)
            if size > ERROR_CAP:
                return None
            parts.append(piece)
    except httpx.HTTPError:
        pass
    finally:
        await response.aclose()
    return b"".join(parts)


def _replaced(api: str, status: int, message: str) -> httpx.Response:
    body = apis.error_body(api, status, message)
    return httpx.Response(status, headers=[(b"content-type", b"application/json"),
                                           (b"content-length", b"%d" % len(body))], stream=httpx.ByteStream(body))
