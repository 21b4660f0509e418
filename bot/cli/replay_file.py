"""A webhook delivery as saved from a GitHub App's "Recent deliveries" page: its request headers as
`Name: value` lines (`X-GitHub-Event: issue_comment`, `X-GitHub-Delivery: …`), a blank line, then
the JSON payload; or the JSON payload alone, its event named on the command line.

The file is read as untrusted text: only GitHub's own `X-GitHub-*` headers and the User-Agent are
kept (never a saved signature, Host or length), and a header value must be printable ASCII."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from bot.errors import BotError

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 -]*$")  # the page also shows "Request URL: …"
_VALUE = re.compile(r"^[\x20-\x7e]*$")
_BLANK = re.compile(r"\r?\n[ \t]*\r?\n")
KEPT = re.compile(r"^(x-github-.+|user-agent)$")


class ReplayFileError(BotError):
    """The file is not a saved delivery; the message says which line and why."""


@dataclass(frozen=True)
class SavedDelivery:
    headers: dict[str, str]  # lower-cased names: GitHub's own X-GitHub-* headers and User-Agent
    body: bytes  # the payload as saved (a JSON object), sent byte for byte

    @property
    def event(self) -> str | None:
        return self.headers.get("x-github-event")

    @property
    def delivery_id(self) -> str | None:
        return self.headers.get("x-github-delivery")


def parse(text: str) -> SavedDelivery:
    """A saved delivery from the file's text (headers then payload, or a payload alone)."""
    text = text.lstrip("\ufeff")
    if text.lstrip().startswith("{"):
        return SavedDelivery({}, _payload(text))
    parts = _BLANK.split(text.strip("\r\n"), maxsplit=1)
    if len(parts) != 2:
        raise ReplayFileError("no blank line between the headers and the JSON payload")
    return SavedDelivery(_headers(parts[0]), _payload(parts[1]))


def _headers(head: str) -> dict[str, str]:
    kept: dict[str, str] = {}
    for number, line in enumerate(head.splitlines(), start=1):
        name, colon, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not colon or not _NAME.match(name):
            raise ReplayFileError(f"line {number} is not a `Name: value` header line")
        if not _VALUE.match(value):
            raise ReplayFileError(f"line {number}: the {name} header's value is not printable ASCII")
        if KEPT.match(name.lower()):
            kept[name.lower()] = value
    return kept


def _payload(text: str) -> bytes:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ReplayFileError(f"the payload is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReplayFileError("the payload is not a JSON object")
    return text.strip().encode()
