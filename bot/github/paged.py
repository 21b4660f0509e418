"""A paged GitHub list read up to a bound, from its start or from its end, following only the
links of GitHub's `Link` header that its allowlist accepts (bot.github.links). The answer says
whether the read stopped before the list's end.

    listed = await thread._authed(lambda: paged.read_list(thread.api, f"{thread.prefix}/pulls/2/files",
                                                          most=3000))
    listed.items, listed.cut          # cut: GitHub listed more than was read
    newest = await thread._authed(lambda: paged.read_newest(thread.api, f"{thread.prefix}/issues/2/comments",
                                                            most=1000))

`read_list` reads from the first page along `rel="next"`. `read_newest` is for the lists GitHub
gives oldest first (a thread's comments, a pull request's reviews) when the newest matter (the
bot's own latest comment, the latest discussion): it reads the first page (it names the `last`),
then from the last page back along `rel="prev"`.

gidgethub's `getiter` follows the Link header without end and hides where one page stops: a list
that keeps answering short (or empty) pages with a `next` link would be read for ever, and a link
to another host would be followed with the token. Each page is asked for here, so the pages are
counted too, and each link is checked before it is followed; a refused link ends the read (cut).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from gidgethub import sansio

from bot.github import links
from bot.github.links import LinkKeepingAPI

log = logging.getLogger("bot.github.paged")
PER_PAGE = 100  # GitHub's largest page


@dataclass(frozen=True)
class Listed:
    """The items read, in GitHub's order; `cut`: the read stopped at its bound with more listed,
    or at a link it refused (`refused`)."""

    items: list[dict]
    cut: bool
    refused: bool = False


async def read_list(api: LinkKeepingAPI, url: str, *, most: int, per_page: int = PER_PAGE,
                    pages: int | None = None, key: str | None = None) -> Listed:
    """The first `most` items, over at most as many pages as `most` fills at `per_page` (or `pages`).
    `key`: the member holding the list when GitHub answers an object (`check_runs`)."""
    _check(most, per_page)
    bound = pages or math.ceil(most / per_page)
    items: list[dict] = []
    following: str | None = with_per_page(url, per_page)
    asked, refused = 0, False
    while following and asked < bound and len(items) < most:
        page, found = await _page(api, following, key)
        items.extend(page)
        asked, refused, following = asked + 1, found.refused, found.rels.get("next")
    listed = Listed(items[:most], len(items) > most or bool(following) or refused, refused)
    _say_cut(url, listed, asked)
    return listed


async def read_newest(api: LinkKeepingAPI, url: str, *, most: int, per_page: int = PER_PAGE,
                      pages: int | None = None, key: str | None = None) -> Listed:
    """The newest `most` items of a list GitHub gives oldest first, in GitHub's order, over at most
    the first page, a short last page and as many as `most` fills at `per_page` (or `pages`)."""
    _check(most, per_page)
    bound = pages or math.ceil(most / per_page) + 2
    head, found = await _page(api, with_per_page(url, per_page), key)
    if "next" not in found.rels or "last" not in found.rels:
        if "next" in found.rels:
            log.warning("%s: GitHub named no last page; reading on from the first", urlsplit(url).path)
        return await _newest_onwards(api, url, head, found, most=most, left=bound - 1, key=key)
    tail: list[dict] = []
    following: str | None = found.rels["last"]
    asked, whole = 1, False
    while following and asked < bound and len(tail) < most:
        page, found = await _page(api, following, key)
        tail, asked = page + tail, asked + 1
        previous = found.rels.get("prev")
        if not found.refused and (previous is None or previous == found.rels.get("first")):
            # back at the first page: read again (it names no prev), or the head read first
            tail, whole = (tail if previous is None else head + tail), True
            break
        following = previous
    listed = Listed(tail[-most:], not whole or len(tail) > most, found.refused)
    _say_cut(url, listed, asked)
    return listed


async def _newest_onwards(api: LinkKeepingAPI, url: str, items: list[dict], found: links.Links, *, most: int,
                          left: int, key: str | None) -> Listed:
    """The newest of what the read along `next` from the first page reaches within `left` pages."""
    following = found.rels.get("next")
    asked = 1
    while following and left:
        page, found = await _page(api, following, key)
        items = items + page
        asked, left, following = asked + 1, left - 1, found.rels.get("next")
    listed = Listed(items[-most:], len(items) > most or bool(following) or found.refused, found.refused)
    _say_cut(url, listed, asked)
    return listed


def _check(most: int, per_page: int) -> None:
    if most < 1 or not 1 <= per_page <= PER_PAGE:
        raise ValueError(f"a bounded read wants most >= 1 and 1 <= per_page <= {PER_PAGE}")


def _say_cut(url: str, listed: Listed, asked: int) -> None:
    if listed.cut:
        log.warning("%s: read stopped at %d items over %d pages; GitHub lists more%s", urlsplit(url).path,
                    len(listed.items), asked, " (a link refused)" if listed.refused else "")


async def _page(api: LinkKeepingAPI, url: str, key: str | None) -> tuple[list[dict], links.Links]:
    # gidgethub's own request path (rate limits, retries, RetryingAPI's headers), one page at a time;
    # the API keeps the answer's whole Link header (gidgethub hands back only `next`)
    data, _, _ = await api._make_request("GET", url, {}, b"", sansio.accept_format())
    found = links.read(links.last(), api.base_url)
    if found.refused:  # a header with anything refused is not GitHub's: none of its links is followed
        found = links.Links(refused=True)
    if isinstance(data, dict) and key is not None:
        data = data.get(key)
    if not isinstance(data, list):
        raise ValueError(f"GitHub answered {type(data).__name__} where a list was expected at {urlsplit(url).path}")
    return [item for item in data if isinstance(item, dict)], found


def with_per_page(url: str, per_page: int) -> str:
    """`url` asking for pages of `per_page` (replacing any it named)."""
    parts = urlsplit(url)
    query = [(name, value) for name, value in parse_qsl(parts.query) if name != "per_page"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("per_page", str(per_page))])))
