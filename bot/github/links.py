"""GitHub's `Link` header (its list pages), read through an allowlist, and the API client that
keeps the header of the answer the current task read last (gidgethub keeps only `next`).

    found = links.read(links.last(), api.base_url)   # after a call through a LinkKeepingAPI
    found.rels["next"]      # only next, prev, first, last; each on the API's own origin and path
    found.refused           # something in the header was refused (and logged): never followed

GitHub writes `<https://api.github.com/repositories/1/issues/1/comments?page=2>; rel="next", …`.
A link is followed with the token, so a link to another host (or with credentials, a fragment,
another rel, a malformed value) is refused: following it would hand the token to that host.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from gidgethub.httpx import GitHubAPI

log = logging.getLogger("bot.github.links")
RELS = ("next", "prev", "first", "last")
MAX_HEADER = 8192  # GitHub's four links are a few hundred characters
MAX_URL = 2048
# one link-value as GitHub writes it: a URL of printable ASCII without `<`, `>`; one quoted rel
_VALUE = re.compile(rf'\s*<([!-;=?-~]{{1,{MAX_URL}}})>\s*;\s*rel="([a-z]{{1,16}})"\s*')
_LAST: ContextVar[str | None] = ContextVar("github_last_link_header", default=None)


@dataclass(frozen=True)
class Links:
    rels: dict[str, str] = field(default_factory=dict)
    refused: bool = False


def read(header: str | None, api_url: str) -> Links:
    """The header's links that are declared (rel in RELS, URL on `api_url`'s origin under its path);
    the rest refused and logged. A rel named twice is refused both times: which one is meant?"""
    if not header:
        return Links()
    if len(header) > MAX_HEADER:
        log.warning("GitHub's Link header refused: %d characters, over %d", len(header), MAX_HEADER)
        return Links(refused=True)
    rels: dict[str, str] = {}
    twice: set[str] = set()
    refused = False
    for value, url, rel in _values(header):
        if url is None or rel not in RELS or not on_api(url, api_url):
            log.warning("GitHub's Link header: refused %r", value[:200])
            refused = True
        elif rel in rels or rel in twice:
            log.warning("GitHub's Link header names rel=%s twice: refused", rel)
            twice.add(rel)
            rels.pop(rel, None)
            refused = True
        else:
            rels[rel] = url
    return Links(rels, refused)


def _values(header: str) -> list[tuple[str, str | None, str]]:
    """(the text, its URL, its rel) of each comma-separated link-value; the text from the first
    value not in the declared form on is one refused value (URL None)."""
    found: list[tuple[str, str | None, str]] = []
    at = 0
    while at < len(header):
        match = _VALUE.match(header, at)
        end = match.end() if match else -1
        if match is None or (end < len(header) and header[end] != ","):
            found.append((header[at:], None, ""))
            break
        found.append((match.group(0), match.group(1), match.group(2)))
        at = end + 1
    return found


def on_api(url: str, api_url: str) -> bool:
    """`url` is on the API's own scheme, host and port, under its path (GHES: /api/v3), without
    credentials, fragment or a `..` segment."""
    try:
        parts, api = urlsplit(url), urlsplit(api_url)
        same_origin = (parts.scheme, parts.netloc.lower()) == (api.scheme, api.netloc.lower())
    except ValueError:
        return False
    under = (parts.path + "/").startswith(api.path.rstrip("/") + "/")
    return same_origin and under and parts.username is None and not parts.fragment \
        and ".." not in parts.path.split("/")


class LinkKeepingAPI(GitHubAPI):
    """gidgethub over httpx that keeps each answer's Link header for `last` (bot.github.paged)."""

    async def _request(self, method: str, url: str, headers: Mapping[str, str],
                       body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        _LAST.set(None)
        answer = await super()._request(method, url, headers, body)
        _LAST.set(answer[1].get("link"))
        return answer


def last() -> str | None:
    """The Link header of the answer this task read last (a context variable: tasks never mix)."""
    return _LAST.get()
