"""What the bot remembers of its reviews of one pull request (tables `reviewed_commits` and
`review_findings`, migration 6): per agent the commit it last reviewed and the review's id, and
each finding it posted with its comment's id, where it sat, its severity, its fingerprint
(bot/review/fingerprint.py) and its state: `open`, `fixed` (the bot resolved its thread) or
`declined` (a writer said no: `declined_via` a reply or a resolution, migration 8; None for a
decline recorded before, which the next review judges again: bot/review/signals.py).

    last = last_reviewed(db, "o/r", 2, ["codex"])     # {"codex": "abc…"}
    earlier = findings(db, "o/r", 2)                  # [Earlier], open and declined
    remember(db, "o/r", 2, ["codex"], sha, review_id, [Posted(...)])
    mark(db, [earlier.id], "fixed", "in abc1234")
    mark(db, [earlier.id], "declined", "@alice declined it in a reply", via="reply")

The stored title is the finding's normalised text, masked for the job's secrets by the caller.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

OPEN, FIXED, DECLINED = "open", "fixed", "declined"
VIA_REPLY, VIA_RESOLUTION = "reply", "resolution"  # how a finding was declined


@dataclass(frozen=True)
class Earlier:
    id: int
    agent: str
    comment_id: int | None
    commit_sha: str
    path: str
    line: int
    start_line: int | None
    side: str
    severity: str | None
    fingerprint: str
    title: str
    state: str
    declined_via: str | None = None

    @property
    def first(self) -> int:
        return self.start_line or self.line


@dataclass(frozen=True)
class Posted:
    """One posted comment, for one of the agents that found it."""

    agent: str
    comment_id: int | None
    path: str
    line: int
    start_line: int | None
    side: str
    severity: str | None
    fingerprint: str
    title: str


def reviewed(db: Any, repo: str, number: int) -> bool:
    return bool(db.query("SELECT 1 FROM reviewed_commits WHERE repo = ? AND number = ? LIMIT 1", [repo, number]))


def last_reviewed(db: Any, repo: str, number: int, agents: list[str]) -> dict[str, str]:
    rows = db.query("SELECT agent, commit_sha FROM reviewed_commits WHERE repo = ? AND number = ?", [repo, number])
    return {row["agent"]: row["commit_sha"] for row in rows if row["agent"] in agents}


def findings(db: Any, repo: str, number: int) -> list[Earlier]:
    """The pull request's open and declined findings, by any agent, oldest first."""
    rows = db.query("SELECT * FROM review_findings WHERE repo = ? AND number = ? AND state != ? ORDER BY id",
                    [repo, number, FIXED])
    return [Earlier(row["id"], row["agent"], row["comment_id"], row["commit_sha"], row["path"], row["line"],
                    row["start_line"], row["side"], row["severity"], row["fingerprint"], row["title"], row["state"],
                    row["declined_via"])
            for row in rows]


def remember(db: Any, repo: str, number: int, agents: list[str], commit: str, review_id: int | None,
             posted: list[Posted]) -> None:
    now = time.time()
    with db.transaction():
        for agent in agents:
            db.execute("DELETE FROM reviewed_commits WHERE repo = ? AND number = ? AND agent = ?",
                       [repo, number, agent])
            db.execute("INSERT INTO reviewed_commits (repo, number, agent, commit_sha, review_id, reviewed_at) "
                       "VALUES (?, ?, ?, ?, ?, ?)", [repo, number, agent, commit, review_id, now])
        db.executemany(
            "INSERT INTO review_findings (repo, number, agent, review_id, comment_id, commit_sha, path, line, "
            "start_line, side, severity, fingerprint, title, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [[repo, number, p.agent, review_id, p.comment_id, commit, p.path, p.line, p.start_line, p.side,
              p.severity, p.fingerprint, p.title, now] for p in posted])


def mark(db: Any, ids: list[int], state: str, detail: str = "", *, via: str | None = None) -> None:
    """`via`: how a decline was made (VIA_REPLY, VIA_RESOLUTION); any other state clears it."""
    if not ids:
        return
    via = via if state == DECLINED else None
    with db.transaction():
        db.executemany("UPDATE review_findings SET state = ?, state_detail = ?, declined_via = ?, updated_at = ? "
                       "WHERE id = ?", [[state, detail[:500], via, time.time(), finding_id] for finding_id in ids])
