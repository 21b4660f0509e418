"""Where a line of `.github/bot.yml` sits in a commit's diff of it: the `position` GitHub's commit
comments take (REST `POST .../commits/{sha}/comments`; its `line` parameter is closing down).

    patch = await patch_of(thread, sha, CONFIG_PATH)   # the file's patch in the commit, or None
    at = position(patch, 7) if patch else None           # None: line 7 is not in the diff

`position` is GitHub's: the patch's first line (the first `@@` header) is 0, the line under it 1,
and the count goes on through later hunks' headers to the patch's end. Only a line the diff shows
on the commit's side (added, or context) has one.

The commit is read from GitHub (`GET .../commits/{sha}`, its `files` a page at a time), but the
patch is the pusher's text: each page is read within MAX_PAGE_BYTES, at most MAX_FILE_PAGES pages;
of the answer only `files[].filename` and `files[].patch` are read (strings; a patch over
MAX_PATCH_CHARS is not used), and a patch is used only when it parses as a unified diff whose
hunks hold exactly the lines their headers count. Anything else is no patch: the caller replies on
the commit without a position.
"""
from __future__ import annotations

import json
import logging
import re
from urllib.parse import quote

import httpx

from bot.errors import BotError
from bot.github import thread as github_thread
from bot.github.client import Thread
from bot.workspace.repo_config import CONFIG_MAX_BYTES

log = logging.getLogger("bot.automations.commit_position")
MAX_PAGE_BYTES = 1 << 20  # one page of a commit's files, as JSON
MAX_FILE_PAGES = 3
FILES_PER_PAGE = 100
MAX_PATCH_CHARS = 4 * CONFIG_MAX_BYTES  # the file's whole removal and addition, with the diff's prefixes
_HUNK = re.compile(r"@@ -(\d{1,9})(?:,(\d{1,9}))? \+(\d{1,9})(?:,(\d{1,9}))? @@(?: .*)?")


def position(patch: str, line: int) -> int | None:
    """The position of the commit's line `line` in `patch`, or None: not shown, or not a patch."""
    lines = patch.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a patch ending in a newline
    found, old, new, at = None, 0, 0, None  # old, new: the hunk's lines still to come; at: the commit's line
    for index, raw in enumerate(lines):
        header, kind = _HUNK.fullmatch(raw), raw[:1]
        if header:
            if old or new:
                return None  # the hunk before holds fewer lines than its header counted
            old, new, at = _count(header.group(2)), _count(header.group(4)), int(header.group(3))
        elif at is None or kind not in (" ", "+", "-", "\\"):
            return None
        elif kind == "\\":
            continue  # "\ No newline at end of file": counted as a position, not as a line
        elif (kind != "+" and not old) or (kind != "-" and not new):
            return None  # more lines than the header counted
        else:
            if kind != "-":
                found = index if at == line and found is None else found
                at, new = at + 1, new - 1
            old -= kind != "+"
    return found if at is not None and not old and not new else None


def _count(value: str | None) -> int:
    return 1 if value is None else int(value)


async def patch_of(thread: Thread, sha: str, path: str) -> str | None:
    """`path`'s patch in commit `sha`, or None: not among the files read, no patch (binary, too large
    for GitHub), over MAX_PATCH_CHARS, or the commit not readable within the bounds."""
    for page in range(1, MAX_FILE_PAGES + 1):
        try:
            files = await _files(thread, sha, page)
        except (httpx.HTTPError, BotError, ValueError) as exc:
            log.info("%s: the files of commit %s were not read (%s): no position", thread.repo, sha[:7],
                     type(exc).__name__)
            return None
        for entry in files:
            if entry.get("filename") == path:
                return _patch(entry)
        if len(files) < FILES_PER_PAGE:
            break
    return None


def _patch(entry: dict) -> str | None:
    patch = entry.get("patch")
    if not isinstance(patch, str) or len(patch) > MAX_PATCH_CHARS:
        return None
    return patch


async def _files(thread: Thread, sha: str, page: int) -> list[dict]:
    api = thread.api
    url = f"{api.base_url}{thread.prefix}/commits/{quote(sha, safe='')}?per_page={FILES_PER_PAGE}&page={page}"
    client: httpx.AsyncClient = api._client  # type: ignore[assignment]  # gidgethub types it as httpx2's (the same API)
    fetched = await github_thread.get(client, url, token=api.oauth_token, cap=MAX_PAGE_BYTES,
                                      hosts=github_thread.Hosts(api.base_url, api.base_url))
    value = json.loads(fetched.body.decode("utf-8"))
    files = value.get("files") if isinstance(value, dict) else None
    return [entry for entry in files if isinstance(entry, dict)] if isinstance(files, list) else []
