"""GitHub's side of a review: the pull request's files (the diff the review is checked against)
and posting the one review.

    files = await pull_files(thread)                 # GET /repos/{o}/{r}/pulls/{n}/files
    review = await post_review(thread, payload)      # POST /repos/{o}/{r}/pulls/{n}/reviews

A review is posted once, never retried blindly (a 5xx may have stored it: a second POST would
be a second review). With a `marker` (a hidden line naming the job), the pull request's reviews
are searched for the bot's own review carrying it first, so a job run again after a crash finds
the review it already posted instead of posting a second one. When GitHub refuses the inline
comments (422: a line it does not accept), the same review is posted once more with the comments
written into its body, so the findings still arrive.
"""
from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from gidgethub import BadRequest

from bot.errors import BotError
from bot.github import paged
from bot.github.client import is_own_comment
from bot.record import inert, render
from bot.record.defang import markers
from bot.record.redact import redact, running_secrets

log = logging.getLogger("bot.review.post")
MAX_FILES = 3000  # GitHub lists at most 3000 files of a pull request
REVIEWS_READ = 300  # the newest reviews searched for the bot's own (GitHub lists them oldest first)
REVIEW_COMMENTS_READ = 1_000  # the newest review comments searched for one review's


async def pull_files(thread: Any) -> list[dict]:
    """The pull request's files, at most MAX_FILES (GitHub's own cap: a cut list is said in the log)."""
    url = f"{thread.prefix}/pulls/{thread.number}/files"
    listed = await thread._authed(lambda: paged.read_list(thread.api, url, most=MAX_FILES))
    return listed.items


class NotPosted(BotError):
    """The re-check right before posting refused: the text says why (a permission revoked mid-run)."""


async def post_review(thread: Any, payload: dict, secrets: Iterable[str] = (),
                      marker: str | None = None,
                      still_allowed: Callable[[], Awaitable[str | None]] | None = None) -> dict:
    """`still_allowed` is asked right before the POST (None: post; else NotPosted with its text)."""
    url = f"{thread.prefix}/pulls/{thread.number}/reviews"
    if marker:
        found = await find_review(thread, marker)
        if found is not None:
            return found
        payload = {**payload, "body": f"{payload['body']}\n{marker}"}
    if still_allowed is not None and (refused := await still_allowed()):
        raise NotPosted(refused)
    payload = masked(payload, secrets)
    try:
        return await thread._authed(lambda: thread.api.post(url, data=payload))
    except BadRequest as exc:
        if int(exc.status_code) != 422 or not payload.get("comments"):
            raise
        log.warning("GitHub refused the review's inline comments (%s); posting them in the body", exc)
        return await thread._authed(lambda: thread.api.post(url, data=inline_in_body(payload)))


async def find_review(thread: Any, marker: str) -> dict | None:
    """The bot's own review of this pull request carrying `marker` outside code, or None. Only the
    newest REVIEWS_READ reviews are looked at (the run cut short posted it lately): one older than
    those is not found, and the review is posted again (the log says the list was cut)."""
    url = f"{thread.prefix}/pulls/{thread.number}/reviews"
    listed = await thread._authed(lambda: paged.read_newest(thread.api, url, most=REVIEWS_READ))
    for review in reversed(listed.items):
        if is_own_comment(review, thread.own_logins) and marker in markers(review.get("body") or ""):
            return review
    return None


async def review_comments(thread: Any, review_id: int) -> list[dict]:
    """The inline comments of one review (GET /pulls/{n}/comments, those carrying its id), oldest
    first, among the pull request's newest REVIEW_COMMENTS_READ (the review was just posted: an
    older comment of it is not found, and its finding's thread cannot be closed later; logged)."""
    url = f"{thread.prefix}/pulls/{thread.number}/comments"
    listed = await thread._authed(lambda: paged.read_newest(thread.api, url, most=REVIEW_COMMENTS_READ))
    return [c for c in listed.items if c.get("pull_request_review_id") == review_id]


def masked(payload: dict, secrets: Iterable[str] = ()) -> dict:
    """Every text of the review masked for the job's secrets and those of every job running now,
    then through the renderer's gate (the same last gate as Thread.create_comment): agent text may
    echo a key, and only rendered text leaves."""
    every = [*secrets, *running_secrets()]
    return {**payload, "body": render.outgoing(redact(payload["body"], every)),
            "comments": [{**c, "body": render.outgoing(redact(c["body"], every))}
                         for c in payload.get("comments") or []]}


def inline_in_body(payload: dict) -> dict:
    """The review with its comments listed in the body instead of on the lines."""
    listed = []
    for comment in payload["comments"]:
        lines = (f"{comment['start_line']}-{comment['line']}" if comment.get("start_line") else str(comment["line"]))
        where = f"{inert.code(comment['path'])} line {lines} ({comment['side']})"  # the PR author's file name
        listed.append(f"#### {where}\n\n{comment['body']}")
    note = "GitHub did not accept these comments on their lines, so they are listed here:"
    body = payload["body"] + f"\n\n{note}\n\n" + "\n\n".join(listed)
    return {**{k: v for k, v in payload.items() if k != "comments"}, "body": render.outgoing(body[:65_000])}
