"""Writers' 👍 and 👎 on the bot's review comments, read through GitHub's REST API before a re-review
and kept as signal (table `review_reactions`, migration 9; shown per agent by bot/review/signal.py).

    counted = await record(db, thread, earlier, judge)    # reactions newly kept

Read through an allowlist: only `+1` and `-1`, only on a finding's own comment, only from a person
the run-time permission check lets change a finding (bot/review/signals.py Judge: write by
default); the bot's own reactions and everything else are dropped, and a reaction of someone
without permission is counted as ignored. Bounded: the newest MAX_COMMENTS findings, the first
page (100) of each comment's reactions. A reaction never changes a finding's state.
"""
from __future__ import annotations

import logging
import time
from typing import Any

from bot.review.memory import Earlier
from bot.review.signals import Judge

log = logging.getLogger("bot.review.reactions")
KEPT = frozenset({"+1", "-1"})
MAX_COMMENTS = 30
MAX_LOGIN = 39  # GitHub's longest login


async def record(db: Any, thread: Any, earlier: list[Earlier], judge: Judge) -> int:
    kept = 0
    for finding in [e for e in earlier if e.comment_id][-MAX_COMMENTS:]:
        try:
            listed = await thread.review_comment_reactions(finding.comment_id)
        except Exception as exc:  # read again at the next review
            log.warning("could not read the reactions to review comment %s: %s", finding.comment_id, exc)
            continue
        for login, content in _allowed(listed, thread.own_logins):
            if not await judge.may(login):
                judge.ignore(finding, login, f"reacted {content}")
                continue
            kept += _keep(db, thread.repo, finding, login, content)
    return kept


def _allowed(listed: Any, own: frozenset[str]) -> list[tuple[str, str]]:
    found = []
    for reaction in listed if isinstance(listed, list) else []:
        if not isinstance(reaction, dict) or reaction.get("content") not in KEPT:
            continue
        login = (reaction.get("user") or {}).get("login")
        if isinstance(login, str) and 0 < len(login) <= MAX_LOGIN and login not in own and \
                not login.endswith("[bot]"):
            found.append((login, str(reaction["content"])))
    return found


def _keep(db: Any, repo: str, finding: Earlier, login: str, content: str) -> int:
    if db.query("SELECT 1 FROM review_reactions WHERE repo = ? AND comment_id = ? AND login = ? AND content = ? "
                "AND agent = ?",
                [repo, finding.comment_id, login.lower(), content, finding.agent]):
        return 0
    db.execute("INSERT INTO review_reactions (repo, comment_id, login, content, agent, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?)", [repo, finding.comment_id, login.lower(), content, finding.agent,
                                             time.time()])
    return 1
