"""Conversations (one per thread) and the session map: which agent session a thread resumes.

Thread key `owner/repo#number`; a review-comment thread shares its PR's conversation. Each
(conversation, agent) has its own backend session id and its own persistent CLI home; the
worktree of a conversation has one stable path, so the CLI's own resume finds its state.
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from adapters import base
from bot.db import Database
from bot.github.client import is_own_comment
from bot.job import thread_text
from bot.job.context import Job
from bot.permissions import own_logins
from bot.workspace.worktrees import conversation_slug

LIMIT_OPENING = 8000
log = logging.getLogger("bot.job.conversations")


def thread_key(repo: str, number: int | str) -> str:
    return f"{repo}#{number}"


def slug(key: str) -> str:
    """A filesystem-safe, stable, unique name for a conversation (the same one the worktree uses)."""
    return conversation_slug(key)


@dataclass
class Session:
    conversation: str
    agent: str
    session_id: str | None
    created_at: float | None
    last_used_at: float | None
    turns: int


def ensure(db: Database, key: str) -> None:
    repo, _, number = key.rpartition("#")
    now = time.time()
    db.execute("INSERT INTO conversations (key, slug, repo, number, created_at, last_active_at) "
               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
               [key, slug(key), repo, int(number) if number.isdigit() else None, now, now])
    db.execute("UPDATE conversations SET last_active_at = ? WHERE key = ?", [now, key])


def session(db: Database, key: str, agent: str) -> Session | None:
    rows = list(db.query("SELECT * FROM sessions WHERE conversation = ? AND agent = ?", [key, agent]))
    return Session(**rows[0]) if rows else None


def resume_id(db: Database, key: str, agent: str) -> str | None:
    """The thread's session id for `agent` when it is one in that CLI's grammar, else None (a
    fresh session with the thread as its recap): it becomes an argument of the CLI, and the map
    may hold what a restored cache or an older bot wrote."""
    stored = session(db, key, agent)
    if stored is None or stored.session_id is None:
        return None
    try:
        base.check_session_id(base.get(agent), stored.session_id)
    except base.InvalidSessionId as exc:
        log.warning("the stored session of %s for %s is refused (%s); starting fresh", agent, key, exc)
        return None
    return stored.session_id


def sessions(db: Database, key: str) -> list[Session]:
    return [Session(**row) for row in db.query(
        "SELECT * FROM sessions WHERE conversation = ? ORDER BY agent", [key])]


def record_turn(db: Database, key: str, agent: str, session_id: str | None, fresh: bool) -> None:
    """After a turn: remember the backend session id; a fresh session restarts the count."""
    now = time.time()
    existing = session(db, key, agent)
    db.execute("DELETE FROM notices WHERE conversation = ? AND kind = ?", [key, COLLECTED])
    if fresh and not session_id and existing is not None:
        return  # a fresh turn that made no session (it failed) leaves the thread's session as it was
    if existing is None or fresh:
        db.execute("INSERT INTO sessions (conversation, agent, session_id, created_at, last_used_at, turns) "
                   "VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (conversation, agent) DO UPDATE SET "
                   "session_id = excluded.session_id, created_at = excluded.created_at, "
                   "last_used_at = excluded.last_used_at, turns = 1", [key, agent, session_id, now, now])
    else:
        db.execute("UPDATE sessions SET session_id = COALESCE(?, session_id), last_used_at = ?, "
                   "turns = turns + 1 WHERE conversation = ? AND agent = ?", [session_id, now, key, agent])


COLLECTED = "home-collected"  # a notices row: retention removed the thread's CLI homes


def mark_collected(db: Database, key: str) -> None:
    """Retention removed the thread's CLI homes (bot.service.retention): no session of the thread
    can be resumed, and the next turn says why it starts fresh."""
    db.execute("UPDATE sessions SET session_id = NULL WHERE conversation = ?", [key])
    db.execute("INSERT INTO notices (conversation, kind, created_at) VALUES (?, ?, ?) ON CONFLICT "
               "(conversation, kind) DO UPDATE SET created_at = excluded.created_at", [key, COLLECTED, time.time()])


def collected_reason(db: Database, key: str) -> str | None:
    """Why the thread starts fresh when retention collected its CLI homes, else None."""
    rows = list(db.query("SELECT n.created_at - (SELECT MAX(s.last_used_at) FROM sessions s WHERE s.conversation "
                         "= n.conversation) AS idle FROM notices n WHERE n.conversation = ? AND n.kind = ?",
                         [key, COLLECTED]))
    if not rows:
        return None
    days = max(1, round((rows[0]["idle"] or 0) / 86_400))  # since the last turn, when it was collected
    return f"the saved session was cleared after {days} day{'s' if days != 1 else ''} without activity"


def forget(db: Database, key: str, agent: str) -> None:
    """The CLI no longer knows the session: the next turn starts fresh."""
    db.execute("DELETE FROM sessions WHERE conversation = ? AND agent = ?", [key, agent])


def recap(comments: list[dict[str, Any]], handle: str, limit_chars: int = 6000, *, in_actions: bool = False) -> str:
    """The thread so far, newest last, trimmed from the oldest end, for a fresh session. The bot's
    own answers are those of `handle`'s App (and, `in_actions`, of the workflow's token)."""
    lines, own = [], own_logins(handle, in_actions)
    for comment in comments:
        login = (comment.get("user") or {}).get("login", "someone")
        body = (comment.get("body") or "").strip()
        if body and not is_own_comment(comment, own):
            lines.append(f"@{login} wrote:\n{body}")
        elif body:
            lines.append(f"@{handle} (you, earlier) answered:\n{_strip_provenance(body)}")
    text = "\n\n".join(lines)
    return text[-limit_chars:] if len(text) > limit_chars else text


def _strip_provenance(body: str) -> str:
    return re.sub(r"<!--.*?-->", "", body.split("<details>", 1)[0], flags=re.S).strip()


def standing_instruction(ctx: Job) -> str:
    where = f"{ctx.repo}#{ctx.number}" if ctx.number else ctx.repo
    return (f"You are a coding agent answering a request from @{ctx.requester} on {where}. "
            f"The repository is checked out in your working directory; read it with the `bot` MCP "
            f"tools read_file, list_files and search (or your own read tools). Make changes only through "
            f"the `bot` MCP tools (save_file, edit_file, delete_file, run); the bot commits and "
            f"pushes them for you. Your final message is posted as the answer, so make it complete.")


async def prompt(ctx: Job, resumed: bool, fresh_reason: str | None,
                 context: thread_text.ThreadContext | None = None) -> str:
    """The request; a fresh session also gets the thread (bot.job.thread_text): the issue or pull
    request, its comments, reviews, diff, failing checks and attachments, hidden content removed."""
    if resumed or ctx.thread is None:
        return ctx.request
    context = context or thread_text.ThreadContext(ctx)
    thread = await context.render(thread_text.PROMPT)
    lead = f"(Starting a fresh session: {fresh_reason}.)\n" if fresh_reason else ""
    return (f"{lead}You are in {ctx.repo}. The thread you are answering in, as its readers see it "
            f"(call read_thread for more of it):\n\n{thread}\n\n"
            f"---\n\nThe request to answer now, from @{ctx.requester}:\n{ctx.request}")


def thread_reader(ctx: Job, context: thread_text.ThreadContext | None = None) -> Callable[[], Awaitable[str]]:
    """The bridge's read_thread tool: the whole thread with a larger budget than the prompt's."""
    async def read_thread() -> str:
        if ctx.thread is None:
            return f"Local request: {ctx.request}"
        return await (context or thread_text.ThreadContext(ctx)).render(thread_text.READ)
    return read_thread
