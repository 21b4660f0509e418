"""`bot action` on a `schedule` event: the automations whose cron line the workflow's run carries
(`github.event.schedule`: a line `bot action workflow` wrote from `.github/bot.yml`), each run in
its own issue with its declared prompt, as the service runs a scheduled slot
(bot/automations/scheduled_run.py).

    line = cron_line(payload)                     # the run's cron line, allowlisted, or None
    due = await due_automations(thread, line)     # the default branch's automations on that line
    number = await issue_of(thread, "deps")       # the automation's open issue, opened when there is none
    session_key(line)                             # "schedule-<digest>": the line's session cache entry

The automations are read from the default branch as GitHub holds it now (a file changed since the
workflow was written counts: an automation no longer on that line runs nothing; an invalid file runs
nothing and says why in the step's log). The Action keeps no database between runs, so the
automation's issue is found by its title among the repository's open issues the workflow's token
opened (the newest MAX_ISSUES_READ open issues: past those, a second one is opened, and the step's
log says so), and opened when there is none. The cron line keys one session
cache entry (the plan step's output `session-key`, which action.yml restores and saves): it holds a
folder per automation's issue, each that thread's own entry (bot/cli/action_session.py), so every
automation on the line resumes its own session from run to run. The
payload's only fields read are `schedule` (digits, spaces and `*,-/`: a line the bot's cron parser,
bot/cron.py, accepts) and `repository.full_name` (an `owner/name` of GitHub's characters).
"""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from typing import Any

from bot import cron
from bot.automations import automation_issue, config_read
from bot.github import paged
from bot.github.client import Thread, is_own_comment
from bot.intake.config_event import is_repo_name
from bot.record import render
from bot.workspace.repo_config import ConfigError, parse
from bot.workspace.repo_config_model import Automation

log = logging.getLogger("bot.cli.action_schedule")
MAX_ISSUES_READ = 1_000  # GitHub lists the open issues newest first
_LINE = re.compile(r"[0-9*,/ -]{1,100}")


def cron_line(payload: dict[str, Any]) -> str | None:
    """The run's cron line, its spaces made single, when it is one the bot's grammar accepts."""
    line = payload.get("schedule")
    if not isinstance(line, str) or not _LINE.fullmatch(line):
        return None
    line = " ".join(line.split())
    try:
        cron.parse(line)
    except ValueError:
        return None
    return line


def session_key(line: str) -> str:
    """The name of the line's session cache entry: GitHub's cache keys take no comma, which a cron
    line may hold, so the line is named by a digest of its spaces-made-single form."""
    return "schedule-" + hashlib.sha256(" ".join(line.split()).encode()).hexdigest()[:16]


def repository(payload: dict[str, Any]) -> str | None:
    """The run's repository (the payload's `repository.full_name`), when it is an `owner/name`."""
    repository = payload.get("repository")
    repo = repository.get("full_name") if isinstance(repository, dict) else None
    return repo if isinstance(repo, str) and is_repo_name(repo) else None


def due(automations: tuple[Automation, ...], line: str) -> list[Automation]:
    """The automations one of whose cron lines is `line` (spaces made single, as the workflow has it)."""
    return [automation for automation in automations
            if line in {" ".join(each.split()) for each in automation.on.schedule or ()}]


async def due_automations(thread: Thread, line: str) -> list[Automation]:
    """Raises ConfigError when the default branch's `.github/bot.yml` is invalid."""
    written = await config_read.written_at(thread, None)
    if written is None:
        return []
    if written.error is not None:
        raise written.error
    return due(parse(written.text, source=written.source).automations, line)


async def issue_of(thread: Thread, name: str) -> int:
    """The automation's open issue that the bot opened, or a new one."""
    found = await open_issue(thread, name)
    if found is not None:
        return found
    created = await thread._authed(lambda: thread.api.post(f"{thread.prefix}/issues", data={
        "title": render.required(automation_issue.title(name)), "body": render.required(automation_issue.body(name))}))
    return int(created["number"])


async def open_issue(thread: Thread, name: str) -> int | None:
    """The automation's open issue that the bot opened, or None (the plan step names its session)."""
    title = str(automation_issue.title(name))
    url = f"{thread.prefix}/issues?state=open"
    listed = await thread._authed(lambda: paged.read_list(thread.api, url, most=MAX_ISSUES_READ))
    for issue in listed.items:
        if issue.get("title") == title and "pull_request" not in issue and is_own_comment(issue, thread.own_logins):
            return int(issue["number"])
    if listed.cut:
        log.warning("the issue of automation %r was looked for among the newest %d open issues only; not found "
                    "there, a new one is opened", name, len(listed.items))
    return None


def slot_now(now: dt.datetime | None = None) -> str:
    """The slot a scheduled workflow run stands for: its minute, in UTC (GitHub may start it late)."""
    return cron.utc(now or dt.datetime.now(dt.UTC)).strftime("%Y-%m-%dT%H:%MZ")


__all__ = ["ConfigError", "cron_line", "due", "due_automations", "issue_of", "open_issue", "repository", "session_key",
           "slot_now"]
