"""The autofix's `max_attempts`: how many times the bot has pushed a fix to a pull request since the
last push by a person, counted in `automation_runs` so that replicas, workers and redeliveries never
exceed it.

    attempt = claim(db, "o/r", automation, head, job_id, account="alice")   # Attempt, or Refused(why)
    pushed(db, "o/r", "fix-ci", attempt.root, new_sha)                       # the bot's push made new_sha

A head the bot pushed belongs to the chain of the head its fix started from (its `root`); any other
head (a person's push) starts a chain of its own, so a person's push resets the count. The rows:
`head:<sha>` the run for that head (once, whatever the number of check suites and deliveries for
it; refused when over a cap, bot/automations/caps.py), `attempt:<root>:<k>` the k-th attempt of
the chain (its primary key is what stops two claims from both being the k-th), `push:<sha>:<root>`
a head the bot pushed. All in one transaction.
"""
from __future__ import annotations

from dataclasses import dataclass

from bot.automations import caps
from bot.automations.runs import ATTEMPT, PUSHED, REFUSED, insert_row
from bot.db import Database
from bot.workspace.repo_config_model import Automation


@dataclass(frozen=True)
class Attempt:
    root: str  # the head the chain started from (a person's push)
    number: int  # 1 .. max_attempts


@dataclass(frozen=True)
class Refused:
    why: str
    notify: bool = False  # spent, or over a cap: a note is due (not a repeat of a run)


def claim(db: Database, repo: str, automation: Automation, head: str, job_id: int,
          account: str | None = None, account_cap: int = 0) -> Attempt | Refused:
    """`account_cap`: BOT_AUTOMATION_ACCOUNT_RUNS_PER_HOUR (bot/automations/caps.py)."""
    name = automation.name
    with db.transaction() as conn:
        admitted = caps.admit(conn, repo, automation, f"head:{head}", job_id, account, account_cap)
        if admitted.refused:
            return Refused(admitted.refused, notify=True)
        if not admitted.runs:
            return Refused(f"already ran (or was refused) for head {head[:7]}")
        root = root_of(conn, repo, name, head)
        mine = conn.query("SELECT slot FROM automation_runs WHERE repo = ? AND automation = ? AND kind = ? "
                          "AND job_id = ? AND slot LIKE ?", [repo, name, ATTEMPT, job_id, f"attempt:{root}:%"])
        if mine:  # this job's retry after its worker died: the same attempt, not the next
            return Attempt(root, int(mine[0]["slot"].rsplit(":", 1)[1]))
        used = len(conn.query("SELECT slot FROM automation_runs WHERE repo = ? AND automation = ? AND kind = ? "
                              "AND slot LIKE ?", [repo, name, ATTEMPT, f"attempt:{root}:%"]))
        if used >= automation.max_attempts:
            why = (f"its {automation.max_attempts} attempt{'s' if automation.max_attempts != 1 else ''} since "
                   f"the last push by a person (at {root[:7]}) are spent")
            _refuse(conn, repo, name, head, why)
            return Refused(why, notify=True)
        if not insert_row(conn, repo, name, f"attempt:{root}:{used + 1}", job_id, ATTEMPT, account, None):
            _refuse(conn, repo, name, head, "another run took the same attempt")
            return Refused("another run took the same attempt")
        return Attempt(root, used + 1)


def pushed(db: Database, repo: str, name: str, root: str, sha: str) -> None:
    """The bot's fix made `sha` the head: its checks belong to the chain of `root`."""
    with db.transaction() as conn:
        insert_row(conn, repo, name, f"push:{sha}:{root}", None, PUSHED, None, None)


def root_of(db: Database, repo: str, name: str, head: str) -> str:
    rows = db.query("SELECT slot FROM automation_runs WHERE repo = ? AND automation = ? AND kind = ? AND slot LIKE ?",
                    [repo, name, PUSHED, f"push:{head}:%"])
    return str(rows[0]["slot"].split(":")[2]) if rows else head


def _refuse(db: Database, repo: str, name: str, head: str, why: str) -> None:
    db.execute("UPDATE automation_runs SET kind = ?, outcome = ? WHERE repo = ? AND automation = ? AND slot = ?",
               [REFUSED, why, repo, name, f"head:{head}"])
