"""The worker's side of a config job (queued by the intake after a push to the default branch that
changed `.github/bot.yml`, or the App's install: bot/intake/config_event.py): read the file from
GitHub, store it when it is valid (bot/automations/schedule.py `remember`: the schedules, fired
runs and Run now read it there), and refuse it on the commit that changed it when it is not
(bot/automations/config_refusal.py), the last valid file staying in force.

    await run(db, job_id, spec, thread)

For a push, the file is read twice: at the pushed commit, which is what a refusal is about (its
line is that version's line), and at the default branch as it is now, which is what is stored (a
late or redelivered push never puts an older file back). A file gone from the default branch
forgets the repository's automations. An invalid file found on install is refused on the default
branch's last commit that changed it (GitHub's commits list, by path).
"""
from __future__ import annotations

import base64
import logging
import re
from dataclasses import dataclass

from gidgethub import BadRequest

from bot.automations import config_refusal, schedule
from bot.db import Database
from bot.github.client import Thread
from bot.intake.config_event import ConfigRead, read_detail
from bot.intake.spec import JobSpec
from bot.workspace.repo_config import CONFIG_MAX_BYTES, CONFIG_PATH, ConfigError, parse

log = logging.getLogger("bot.automations.config_read")
_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Written:
    """The file as GitHub holds it at one commit (or the default branch)."""

    text: str
    source: str  # `.github/bot.yml@abc1234`: the commit read, or the blob for the default branch
    blob: str  # the file's blob sha: the same text when equal
    error: ConfigError | None = None  # why it is invalid


async def run(db: Database, job_id: int, spec: JobSpec, thread: Thread) -> str:
    read = read_detail(spec.automatic.detail if spec.automatic else "")
    if read is None:  # the intake queues none such: a row from elsewhere
        log.error("job %s: a config job whose detail is outside the allowlist: nothing read", job_id)
        return "done"
    pushed = await written_at(thread, read.after) if read.reason == "push" else None
    if pushed is not None and pushed.error is not None:
        await config_refusal.reply_once(db, thread, job_id, read.commit or read.after, pushed.error,
                                        schedule.stored_source(db, spec.repo))
    current = await written_at(thread, None)
    if read.reason == "installation" and current is not None and current.error is not None \
            and (changed := await last_change(thread)) is not None:
        await config_refusal.reply_once(db, thread, job_id, changed, current.error,
                                        schedule.stored_source(db, spec.repo))
    _store(db, spec, read, current)
    return "done"


async def last_change(thread: Thread) -> str | None:
    """The default branch's last commit that changed `.github/bot.yml` (the commit of the version
    read there now), or None when GitHub names none."""
    found = await thread._authed(lambda: thread.api.getitem(
        f"{thread.prefix}/commits?path={CONFIG_PATH}&per_page=1"))
    sha = found[0].get("sha") if isinstance(found, list) and found and isinstance(found[0], dict) else None
    return sha if isinstance(sha, str) and _SHA.fullmatch(sha) else None


def _store(db: Database, spec: JobSpec, read: ConfigRead, current: Written | None) -> None:
    if current is None:
        log.info("%s: no %s on the default branch (%s): its automations are forgotten", spec.repo, CONFIG_PATH,
                 read.reason)
        schedule.forget(db, spec.repo)
    elif current.error is not None:
        log.info("%s: %s, read after %s, is invalid; the last valid one stays in force: %s", spec.repo, CONFIG_PATH,
                 read.reason, current.error)
    else:
        schedule.remember(db, spec.repo, spec.repo_id, spec.installation_id, current.text, current.source)
        log.info("%s: %s stored after %s", spec.repo, current.source, read.reason)


async def written_at(thread: Thread, ref: str | None) -> Written | None:
    """`.github/bot.yml` at commit `ref` (None: the default branch), parsed; None when there is
    none. Bounded: a file over CONFIG_MAX_BYTES is not decoded, and is invalid."""
    url = f"{thread.prefix}/contents/{CONFIG_PATH}" + (f"?ref={ref}" if ref else "")
    try:
        found = await thread._authed(lambda: thread.api.getitem(url))
    except BadRequest as exc:
        if int(exc.status_code) == 404:
            return None
        raise
    blob = str(found.get("sha") or "") if isinstance(found, dict) else ""
    source = f"{CONFIG_PATH}@{(ref or blob)[:7]}"
    if not isinstance(found, dict) or found.get("type", "file") != "file":
        return Written("", source, blob, ConfigError("it is not a file", source=source))
    if int(found.get("size") or 0) > CONFIG_MAX_BYTES:
        return Written("", source, blob, ConfigError(f"the file is larger than {CONFIG_MAX_BYTES:,} bytes: it was "
                                                     "not read", source=source))
    raw = base64.b64decode(str(found.get("content") or "")[: CONFIG_MAX_BYTES * 2])
    text = raw[:CONFIG_MAX_BYTES].decode("utf-8", "replace")
    try:
        parse(text, source=source)
    except ConfigError as exc:
        return Written(text, source, blob, exc)
    return Written(text, source, blob)
