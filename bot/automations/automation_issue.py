"""The one issue per (repository, automation) where its scheduled runs answer: opened by the bot on
the first run, and reused on every later one, so the runs read as one thread and the agent's session
(keyed by the thread) resumes from run to run. Its number is stored in `automation_issues`; one that
was closed, deleted (GitHub answers 410) or is unknown (404) is replaced by a new one.

    number = await ensure(db, api, "o/r", "deps")

The title and body are the bot's own text, through the renderer (bot/record/render.py); the stored
number is only ever used as an issue number of that repository.

The automation's scheduled and fired runs queue in its issue's thread (bot/automations/
scheduled_job.py `queue_key`). Storing a new issue moves, in the same transaction, the runs still
queued or running under the automation's own key or the replaced issue's thread into the new one:
a slot queued after it queues there, so no two of them, and no run and a mention there, run at once.

    store(db, "o/r", "deps", 9)   # what `ensure` does when it opened #9
"""
from __future__ import annotations

import logging
import time

from gidgethub import BadRequest

from bot.automations import scheduled_job
from bot.db import Database
from bot.github.client import RetryingAPI
from bot.job.conversations import thread_key
from bot.record import render
from bot.record.render import Rendered

log = logging.getLogger("bot.automations.automation_issue")
GONE = (404, 410)


async def ensure(db: Database, api: RetryingAPI, repo: str, name: str) -> int:
    """The automation's open issue, opened now when there is none."""
    stored = _stored(db, repo, name)
    if stored is not None and await _is_open(api, repo, stored):
        return stored
    created = await api.post(f"/repos/{repo}/issues", data={"title": render.required(title(name)),
                                                             "body": render.required(body(name))})
    number = int(created["number"])
    log.info("automation %s of %s: opened issue #%d%s", name, repo, number,
             f" (#{stored} was closed or is gone)" if stored is not None else "")
    store(db, repo, name, number)
    return number


def title(name: str) -> Rendered:
    return render.title(f"Automation: {name}")


def body(name: str) -> Rendered:
    return render.outgoing(
        f"The scheduled runs of the automation `{name}`, declared in this repository's `.github/bot.yml` "
        "(on the default branch), answer here, one comment per run; each run continues the previous "
        "one's session.\n\nClosing this issue is harmless: the next run opens a new one. To stop the "
        f"runs, remove `{name}` from `.github/bot.yml`.")


async def _is_open(api: RetryingAPI, repo: str, number: int) -> bool:
    try:
        issue = await api.getitem(f"/repos/{repo}/issues/{number}")
    except BadRequest as exc:
        if int(exc.status_code) in GONE:
            return False
        raise
    return bool(issue.get("state") == "open")


def _stored(db: Database, repo: str, name: str) -> int | None:
    rows = db.query("SELECT number FROM automation_issues WHERE repo = ? AND automation = ?", [repo, name])
    return int(rows[0]["number"]) if rows else None


def store(db: Database, repo: str, name: str, number: int) -> None:
    """`number` is the automation's issue now; its open runs move into that issue's thread."""
    prefix = scheduled_job.delivery_prefix(repo, name)
    with db.transaction() as conn:
        was = scheduled_job.queue_key(conn, repo, name)
        conn.execute("INSERT INTO automation_issues (repo, automation, number, updated_at) VALUES (?, ?, ?, ?) "
                     "ON CONFLICT (repo, automation) DO UPDATE SET number = excluded.number, "
                     "updated_at = excluded.updated_at", [repo, name, number, time.time()])
        conn.execute("UPDATE jobs SET conversation = ? WHERE status IN ('queued', 'running') AND kind = 'episode' "
                     f"AND conversation IN (?, ?) AND substr(delivery_id, 1, {len(prefix)}) = ?",
                     [thread_key(repo, number), was, scheduled_job.own_key(repo, name), prefix])
