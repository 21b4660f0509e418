"""In GitHub Actions mode, a person without permission to run the bot gets at most one answer per
thread per BOT_OUTSIDER_REPLY_WINDOW (help, the agent list, the not-allowed notice alike). Workflow
runs share no store, so the thread itself is the record: each such answer carries MARKER, and the
newest of the bot's own comments carrying it says when the last one was posted."""
from __future__ import annotations

import time
from datetime import datetime

from bot.github.client import Thread

MARKER = "<!-- bot:outsider-reply -->"


async def answered_recently(thread: Thread, review_thread: int | None, window_s: float) -> bool:
    """Whether the bot answered someone without permission here within the window (seconds)."""
    comment_id = await thread.find_comment(MARKER, review_thread)
    if comment_id is None:
        return False
    kind = "pulls" if review_thread else "issues"
    comment = await thread.api.getitem(f"{thread.prefix}/{kind}/comments/{comment_id}")
    posted = datetime.fromisoformat(comment["created_at"].replace("Z", "+00:00")).timestamp()
    return time.time() - posted < window_s


def marked(text: str) -> str:
    return f"{text}\n{MARKER}"
