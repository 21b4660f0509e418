"""The one reply on a commit whose `.github/bot.yml` was refused: a commit comment (REST `POST
/repos/{owner}/{repo}/commits/{sha}/comments`) on the file and line the error names, saying what
is wrong and that the last valid file stays in force.

    comment_id = await reply_once(db, thread, job_id, sha, error, last_valid)   # None: replied already

Once per (repository, commit), whatever the number of deliveries, jobs and workers: the
`automation_config_refusals` row (migration 18) is claimed before the comment is posted, and only
the job that claimed it posts; the same job run again after its worker died looks for its comment
(its marker, on the bot's own comments) before posting. The row is kept for as long as GitHub
can redeliver the push (bot/service/retention.py: REFUSALS_KEPT_DAYS). The reply is on the commit
even when it came from a merged pull request: the commit is what changed the file, and GitHub
shows its comments on the pull request's commit too.

The file is someone else's text, maybe hostile: the reply quotes none of it but the key's dotted
name (a code span of at most MAX_KEY_CHARS) and the parser's reason (inert words, at most
MAX_REASON_CHARS). The comment is placed on the line by its `position` in the commit's diff of the
file (bot/automations/commit_position.py: the commit's patch read bounded and checked; GitHub's
`line` parameter is closing down). When the line is not in the diff, the patch is missing, too
large or not read, or GitHub refuses the position (422), the reply is posted on the commit itself,
and still names the line.
"""
from __future__ import annotations

import logging
import time

from gidgethub import BadRequest

from bot.automations.commit_position import patch_of, position
from bot.db import Database
from bot.github import paged
from bot.github.client import Thread, is_own_comment
from bot.record import render
from bot.record.defang import markers
from bot.workspace.repo_config import CONFIG_PATH, ConfigError

log = logging.getLogger("bot.automations.config_refusal")
MAX_KEY_CHARS = 80
MAX_REASON_CHARS = 300
MAX_COMMENTS_READ = 300  # a commit's comments looked through for the marker (after a crash)


async def reply_once(db: Database, thread: Thread, job_id: int, sha: str, error: ConfigError,
                     last_valid: str | None) -> int | None:
    claim = _claim(db, thread.repo, sha, error, job_id)
    if claim is None:
        log.info("%s: the refusal of %s at %s was replied to already, or another job replies", thread.repo,
                 CONFIG_PATH, sha[:7])
        return None
    marker = f"<!-- bot:config-refused {sha} -->"
    comment_id = (await _found(thread, sha, marker) if claim == "again" else None) \
        or await _post(thread, sha, render.required(body(error, last_valid, marker)), error.line)
    db.execute("UPDATE automation_config_refusals SET comment_id = ? WHERE repo = ? AND commit_sha = ?",
               [comment_id, thread.repo, sha])
    log.info("%s: %s at %s refused (line %s); replied on the commit (comment %s)", thread.repo, CONFIG_PATH,
             sha[:7], error.line, comment_id)
    return comment_id


def body(error: ConfigError, last_valid: str | None, marker: str) -> render.Rendered:
    where = f"line {int(error.line)}" if error.line else "the file"
    key = f", key {render.code(error.key, MAX_KEY_CHARS)}" if error.key else ""
    kept = (f"the last valid file ({render.code(last_valid, 80)}) stays in force" if last_valid
            else "no automation runs until a valid file reaches the default branch")
    return render.outgoing(
        f"⚠️ I did not take this `{CONFIG_PATH}`: {where}{key}: {render.words(error.reason, MAX_REASON_CHARS)}\n\n"
        f"No automation changed: {kept}. Push a fix to the default branch and I will read it again.\n\n"
        f"{marker}")


def _claim(db: Database, repo: str, sha: str, error: ConfigError, job_id: int) -> str | None:
    """"new": this job claimed the reply now; "again": this job claimed it before (a run cut short);
    None: it was replied to, or another job claimed it."""
    with db.transaction() as conn:
        if conn.execute("INSERT INTO automation_config_refusals (repo, commit_sha, line, problem, job_id, created_at) "
                        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                        [repo, sha, error.line, render.words(error.reason, MAX_REASON_CHARS), job_id,
                         time.time()]).rowcount:
            return "new"
        rows = conn.query("SELECT job_id, comment_id FROM automation_config_refusals WHERE repo = ? AND "
                          "commit_sha = ?", [repo, sha])
    return "again" if rows and rows[0]["comment_id"] is None and rows[0]["job_id"] == job_id else None


async def _found(thread: Thread, sha: str, marker: str) -> int | None:
    """The bot's own comment on the commit that carries `marker`, posted by a run cut short."""
    url = f"{thread.prefix}/commits/{sha}/comments"
    listed = await thread._authed(lambda: paged.read_list(thread.api, url, most=MAX_COMMENTS_READ))
    for comment in listed.items:
        if is_own_comment(comment, thread.own_logins) and marker in markers(comment.get("body") or ""):
            return int(comment["id"])
    return None


async def _post(thread: Thread, sha: str, text: str, line: int | None) -> int:
    url = f"{thread.prefix}/commits/{sha}/comments"
    placed = await _placed(thread, sha, int(line)) if line else {}
    try:
        posted = await thread._authed(lambda: thread.api.post(url, data={"body": text, **placed}))
    except BadRequest as exc:
        if int(exc.status_code) != 422 or not placed:
            raise
        log.info("%s: GitHub refused the comment on %s line %s of %s (422): posted on the commit", thread.repo,
                 CONFIG_PATH, line, sha[:7])
        posted = await thread._authed(lambda: thread.api.post(url, data={"body": text}))
    return int(posted["id"])


async def _placed(thread: Thread, sha: str, line: int) -> dict[str, str | int]:
    """The comment's place on the line (its position in the commit's diff of the file), or nowhere."""
    patch = await patch_of(thread, sha, CONFIG_PATH)
    at = position(patch, line) if patch is not None else None
    if at is None:
        log.info("%s: line %s of %s is not in the diff of %s as read: the reply goes on the commit", thread.repo,
                 line, CONFIG_PATH, sha[:7])
        return {}
    return {"path": CONFIG_PATH, "position": at}
