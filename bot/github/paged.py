"""A paged GitHub list read up to a bound: at most `most` items, over at most as many pages as
`most` fills at `per_page` (or `pages`), following GitHub's `Link: rel="next"` header and stopping
at its end. The answer says whether the read stopped before the list's end.

    listed = await thread._authed(lambda: paged.read_list(thread.api, f"{thread.prefix}/pulls/2/files",
                                                          most=3000))
    listed.items, listed.cut          # cut: GitHub listed more than was read

gidgethub's `getiter` follows the Link header without end and hides where one page stops: a list
that keeps answering short (or empty) pages with a `next` link would be read for ever. Each page
is asked for here, so the pages are counted too.
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from gidgethub import sansio

from bot.github.client import RetryingAPI

log = logging.getLogger("bot.github.paged")
PER_PAGE = 100  # GitHub's largest page


@dataclass(frozen=True)
class Listed:
    """The items read, in GitHub's order; `cut`: the read stopped at its bound with more listed."""

    items: list[dict]
    cut: bool


async def read_list(api: RetryingAPI, url: str, *, most: int, per_page: int = PER_PAGE,
                    pages: int | None = None, key: str | None = None) -> Listed:
    """`key`: the member holding the list when GitHub answers an object (`check_runs`)."""
    if most < 1 or not 1 <= per_page <= PER_PAGE:
        raise ValueError(f"a bounded read wants most >= 1 and 1 <= per_page <= {PER_PAGE}")
    left = pages or math.ceil(most / per_page)
    items: list[dict] = []
    following: str | None = with_per_page(url, per_page)
    while following and left and len(items) < most:
        page, following = await _page(api, following, key)
        items.extend(page)
        left -= 1
    cut = len(items) > most or bool(following)
    if cut:
        log.warning("%s: read stopped at %d items over %d pages; GitHub lists more", urlsplit(url).path,
                    min(len(items), most), (pages or math.ceil(most / per_page)) - left)
    return Listed(items[:most], cut)


async def _page(api: RetryingAPI, url: str, key: str | None) -> tuple[list[dict], str | None]:
    # gidgethub's own request path (rate limits, retries, RetryingAPI's headers), one page at a time
    data, following, _ = await api._make_request("GET", url, {}, b"", sansio.accept_format())
    if isinstance(data, dict) and key is not None:
        data = data.get(key)
    if not isinstance(data, list):
        raise ValueError(f"GitHub answered {type(data).__name__} where a list was expected at {urlsplit(url).path}")
    return [item for item in data if isinstance(item, dict)], following


def with_per_page(url: str, per_page: int) -> str:
    """`url` asking for pages of `per_page` (replacing any it named)."""
    parts = urlsplit(url)
    query = [(name, value) for name, value in parse_qsl(parts.query) if name != "per_page"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("per_page", str(per_page))])))
