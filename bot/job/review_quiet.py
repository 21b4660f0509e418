"""Quiet when there is nothing to say (docs/reviews.md, "Quiet reviews"): a review with nothing at or
above `reviews.min_severity` posts no review and leaves no comment. Its visible result is a 👍 on
the comment that asked for it and the check run (when enabled); the tracking comment is taken back.
Where no 👍 can be placed and no check run says it (a label, a push, an opened pull request: no
comment to react to), the tracking comment stays as one line. `reviews.quiet: false` posts the
"No issues found" review instead.

    if nothing_to_say(settings, chosen, all_finished=True, event="COMMENT"): ...
    reacted = await thumbs_up(ctx)
"""
from __future__ import annotations

import logging

from bot.github.client import with_retries
from bot.job.context import Job
from bot.review.render import EVENT, no_issues
from bot.review.selection import Selection
from bot.workspace.repo_config import ReviewsSection

log = logging.getLogger("bot.job.review_quiet")
REACTABLE = ("issue_comment", "review_comment")  # a review's body or an item itself is no comment to answer on


def nothing_to_say(settings: ReviewsSection, chosen: Selection, *, all_finished: bool, event: str) -> bool:
    """No finding at or above the threshold, no agent's failure to report, no verdict to give."""
    return (settings.quiet and not chosen.posted and not chosen.summarised and all_finished
            and event == EVENT)


async def thumbs_up(ctx: Job) -> bool:
    """👍 on the comment that asked for the review; False when there is none or GitHub refused."""
    target = ctx.target or {}
    if target.get("type") not in REACTABLE or ctx.thread is None:
        return False
    thread = ctx.thread
    try:
        await with_retries(lambda: thread.react(target, "+1"))
    except Exception as exc:  # the one-line answer says it instead
        log.warning("could not react to the review request: %s", exc)
        return False
    return True


def said(minimum: str, files: int) -> str:
    """"no issues found in 3 files" (or "… at or above important …")."""
    text = no_issues(minimum, files)
    return text[0].lower() + text[1:]


def one_line(agents: list[str], head: str, minimum: str, files: int) -> str:
    return f"✅ {', '.join(agents)} reviewed `{head[:7]}`: {said(minimum, files)}."
