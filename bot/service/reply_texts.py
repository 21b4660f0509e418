"""What a reply says, for the service's reply jobs and the Action's answers: written once.

They differ only where the medium does. The service tells an outsider once per thread (a notice
row); the Action, which keeps no such row, says it without the promise. A stop in the Action is
cancelling the workflow run; in the service a reply of kind `stop` is from an older intake.
"""
from __future__ import annotations

import datetime as dt

from adapters import base
from bot.automations import pauses
from bot.config import Settings
from bot.db import Database
from bot.intake import grammar
from bot.intake.spec import JobSpec
from bot.job import conversations, replies
from bot.relay.budgets import Ledger, Scope
from bot.service import queue


def reply_text(db: Database | None, spec: JobSpec, kind: str, conversation: str, settings: Settings, *,
               in_actions: bool = False) -> str:
    """`kind`: not_allowed | unknown_agent | status | stop | pause | resume (the Action's: it has no
    pause) | help; a command with no answer here says nothing was done. `db` is read only for a
    status; `settings` for the handle (help, and a paused thread's status) and the default agent (help)."""
    agents = base.names()
    if kind == "not_allowed":
        return replies.not_allowed() if in_actions else replies.not_allowed_once()
    if kind == "unknown_agent":
        return replies.unknown_agent(spec.command.unknown_name, agents)
    if kind == "status":
        assert db is not None, "a status is read from the store"
        return status_text(db, conversation, spec.author, spec.author_id,
                           paused=_paused(db, spec.repo, spec.number, settings.handle))
    if kind == "stop":
        return replies.stop_in_actions() if in_actions else replies.nothing_running()
    if kind in ("pause", "resume") and in_actions:
        return replies.pause_in_actions()
    if kind == "help":
        return replies.help_text(settings.handle, agents, settings.default_agent, grammar.USAGES)
    return replies.unknown_command(kind)


def status_text(db: Database, conversation: str, requester: str | None = None, requester_id: int | None = None,
                paused: str | None = None) -> str:
    """The thread's status with its model spend and the asker's today, from the relay's ledger;
    `paused`: the line that says who paused the thread and since when."""
    spend = Ledger(db).spent(Scope(conversation=conversation, requester=str(requester_id) if requester_id else None))
    return replies.status(conversation, conversations.sessions(db, conversation), queue.open_jobs(db, conversation),
                          spend=spend, requester=requester, paused=paused)


def _paused(db: Database, repo: str, number: int, handle: str) -> str | None:
    found = pauses.paused(db, repo, number)
    if found is None:
        return None
    since = dt.datetime.fromtimestamp(found.at, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return replies.paused_line(found.by, since, handle)
