"""Replies to people without permission to run the bot are capped, so an outsider cannot make the
bot post without limit: per thread, one reply (help, status, the agent list) per
BOT_OUTSIDER_REPLY_WINDOW seconds, claimed in the same transaction as the reply job. The
not-allowed notice has its own claim, once per thread (store.enqueue_delivery's `notice`).

Who has permission is decided here as at intake: the comment's author association
(bot.permissions); the worker's check against GitHub comes later and only for what acts.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from bot.db import Database
from bot.permissions import association_may_trigger

KIND = "outsider-reply"  # a notices row: the last reply to someone without permission in the thread
NOT_ALLOWED = "not_allowed"  # claimed once per thread by store.enqueue_delivery instead


def capped(spec: dict[str, Any], conversation: str, window_s: float,
           statements: Callable[[Database], int | None]) -> Callable[[Database], int | None]:
    """`statements` (which store a job), preceded for a reply to someone without permission by
    the claim of the thread's reply for the window (`window_s`, BOT_OUTSIDER_REPLY_WINDOW): None,
    storing nothing, when it is taken."""
    reply = spec.get("reply")
    if reply is None or reply == NOT_ALLOWED or association_may_trigger(spec.get("association")):
        return statements
    return lambda conn: statements(conn) if claim(conn, conversation, window_s) else None


def claim(conn: Database, conversation: str, window_s: float) -> bool:
    """Take the thread's reply to an outsider unless one was sent within the last `window_s` seconds."""
    now = time.time()
    changed: int = conn.execute(
        "INSERT INTO notices (conversation, kind, created_at) VALUES (?, ?, ?) "
        "ON CONFLICT (conversation, kind) DO UPDATE SET created_at = excluded.created_at "
        "WHERE notices.created_at <= ?",
        [conversation, KIND, now, now - window_s]).rowcount
    return changed == 1
