"""Learned review rules (table `learned_rules`, migration 9): a kind of finding writers declined on two
or more pull requests is proposed to the repository's maintainers as a rule; approved, it applies to
every later review; discarded, it is never proposed again.

    new = propose(db, "o/r")                       # after a decline is recorded: [Learned] candidates
    listed(db, "o/r")                              # candidates and approved rules, for the settings page
    decide(db, "o/r", id, APPROVE, "maint", wording="…", folder="tests")   # or DISCARD
    for rule in approved(db, "o/r"):
        rule.withholds(finding)                    # the bot withholds it, whatever the agent does
        rule.as_rule()                             # what the agents are told (bot/review/rules.py)
    record_pull_request(db, id, 12, url, "REVIEW.md", line)   # its pull request into REVIEW.md (learned_pull.py)
    record_pull_state(db, id, MERGED)              # as GitHub says it is now; CLOSED (unmerged) no longer counts

"Same kind", kept simple: two declined findings are of one kind when their files sit in the same
folder (the file's directory, "" at the root) and their normalised texts (bot/review/fingerprint.py)
are at least `merge.SIMILAR` alike, as a declined finding is matched within a pull request
(bot/review/history.py). A rule withholds a finding whose file is under its folder (at any depth)
and whose text is as alike its kind's.

Only a decline a writer made counts: `declined_via` is set only when the run-time permission check
passed (bot/review/signals.py); a decline recorded before it (None) teaches nothing. Nothing applies
before a maintainer approves it (the settings page checks maintain or admin, bot/settings/routes.py).
"""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from bot.errors import BotError
from bot.review.findings import Finding
from bot.review.fingerprint import normalised, title_of
from bot.review.merge import SIMILAR, similarity
from bot.review.rules import Rule

CANDIDATE, APPROVED, DISCARDED = "candidate", "approved", "discarded"
OPEN, MERGED, CLOSED = "open", "merged", "closed"  # a rule's pull request, as GitHub last said (closed: unmerged)
APPROVE, DISCARD = "approve", "discard"
MIN_PULLS = 2  # distinct pull requests on which writers declined the kind
MAX_DECLINES_READ = 2_000  # the newest declined findings read when proposing
MAX_EVIDENCE = 10  # declined threads kept as a candidate's evidence
MAX_WORDING = 500
MAX_FOLDER = 200
MAX_FAILURE = 500
LEARNED_SOURCE = "learned rule"
_COMPONENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


class RuleEditRefused(BotError, ValueError):
    """A maintainer's edit outside the grammar: said on the page, nothing changed."""


@dataclass(frozen=True)
class Evidence:
    number: int
    comment_id: int | None
    title: str  # the declined finding's first line, as stored (masked, inert)


@dataclass(frozen=True)
class Learned:
    id: int
    repo: str
    folder: str
    finding: str  # the kind's normalised text: what a finding is matched against
    wording: str  # what the agents are told, and the REVIEW.md line
    state: str
    evidence: tuple[Evidence, ...]
    decided_by: str | None = None
    pull_request: str | None = None  # the URL of the pull request adding it to REVIEW.md (bot/review/learned_pull.py)
    pull_request_number: int | None = None
    pull_request_failure: str | None = None  # why opening it failed, until it opens
    pull_request_state: str | None = None  # OPEN, MERGED or CLOSED (None: recorded before migration 14, open)
    pull_request_path: str | None = None  # the REVIEW.md it wrote the line to
    pull_request_line: str | None = None  # the line it wrote

    @property
    def recorded(self) -> bool:
        """A pull request that holds or held the rule: open or merged. One closed unmerged does not count."""
        return bool(self.pull_request) and self.pull_request_state != CLOSED

    def covers(self, path: str) -> bool:
        return not self.folder or path.startswith(self.folder + "/")

    def withholds(self, finding: Finding) -> bool:
        return self.covers(finding.path) and similarity(self.finding, normalised(title_of(finding.body))) >= SIMILAR

    def as_rule(self) -> Rule:
        return Rule(f"{LEARNED_SOURCE} {self.id}", self.wording, f"/{self.folder}/**" if self.folder else "**")

    @property
    def title(self) -> str:
        return self.evidence[0].title if self.evidence else self.finding


def folder_of(path: str) -> str:
    return path.rpartition("/")[0]


def propose(db: Any, repo: str) -> list[Learned]:
    """Every kind declined by writers on MIN_PULLS pull requests that is not yet known here, as new candidates."""
    known = [(r["folder"], r["finding"]) for r in db.query("SELECT folder, finding FROM learned_rules WHERE repo = ?",
                                                           [repo])]
    new: list[Learned] = []
    for folder, group in _kinds(_declines(db, repo)):
        finding = normalised(group[0]["title"])
        if len({row["number"] for row in group}) < MIN_PULLS or _known(known, folder, finding):
            continue
        evidence = [{"number": int(r["number"]), "comment_id": r["comment_id"], "title": r["title"]}
                    for r in group[:MAX_EVIDENCE]]
        db.execute("INSERT INTO learned_rules (repo, folder, finding, wording, state, evidence, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)",
                   [repo, folder, finding, _wording(group[0]["title"], folder), CANDIDATE, json.dumps(evidence),
                    time.time()])
        known.append((folder, finding))
        new.extend(r for r in listed(db, repo) if (r.folder, r.finding) == (folder, finding))
    return new


def listed(db: Any, repo: str, states: tuple[str, ...] = (CANDIDATE, APPROVED)) -> list[Learned]:
    rows = db.query("SELECT * FROM learned_rules WHERE repo = ? ORDER BY id", [repo])
    return [_learned(row) for row in rows if row["state"] in states]


def approved(db: Any, repo: str) -> list[Learned]:
    return listed(db, repo, (APPROVED,))


def decide(db: Any, repo: str, rule_id: int, action: str, actor: str, *, wording: str | None = None,
           folder: str | None = None) -> Learned | None:
    """A maintainer's decision on one of `repo`'s rules; None when there is no such rule there."""
    if action not in (APPROVE, DISCARD):
        raise RuleEditRefused("Choose approve or discard.")
    current = one(db, repo, rule_id)
    if current is None:
        return None
    text = current.wording if wording is None else checked_wording(wording)
    where = current.folder if folder is None else checked_folder(folder)
    state = APPROVED if action == APPROVE else DISCARDED
    db.execute("UPDATE learned_rules SET wording = ?, folder = ?, state = ?, decided_by = ?, decided_at = ? "
               "WHERE id = ?", [text, where, state, actor, time.time(), rule_id])
    return _learned(db.query("SELECT * FROM learned_rules WHERE id = ?", [rule_id])[0])


def one(db: Any, repo: str, rule_id: int) -> Learned | None:
    rows = db.query("SELECT * FROM learned_rules WHERE repo = ? AND id = ?", [repo, rule_id])
    return _learned(rows[0]) if rows else None


def record_pull_request(db: Any, rule_id: int, number: int, url: str, path: str, line: str) -> None:
    """The open pull request that writes `line` into `path` (a new one, or the same one updated)."""
    db.execute("UPDATE learned_rules SET pull_request = ?, pull_request_number = ?, pull_request_failure = NULL, "
               "pull_request_state = ?, pull_request_path = ?, pull_request_line = ? WHERE id = ?",
               [url[:500], number, OPEN, path, line, rule_id])


def record_pull_state(db: Any, rule_id: int, state: str) -> None:
    """What GitHub says of the recorded pull request now: OPEN, MERGED or CLOSED."""
    if state not in (OPEN, MERGED, CLOSED):
        raise ValueError(state)
    db.execute("UPDATE learned_rules SET pull_request_state = ? WHERE id = ?", [state, rule_id])


def record_pull_request_failure(db: Any, rule_id: int, why: str) -> None:
    """Why the pull request did not open or update (kept until one does; the page shows it)."""
    db.execute("UPDATE learned_rules SET pull_request_failure = ? WHERE id = ?", [why[:MAX_FAILURE], rule_id])


def checked_wording(text: str) -> str:
    cleaned = " ".join(text.split())
    if not cleaned or len(cleaned) > MAX_WORDING:
        raise RuleEditRefused(f"The rule's wording must be 1 to {MAX_WORDING} characters.")
    return cleaned


def checked_folder(folder: str) -> str:
    """A folder from the root: names of letters, digits, `._-` joined by `/`, or empty for the whole
    repository; a trailing `/` is dropped. Anything else is refused."""
    folder = folder.strip().removesuffix("/")
    if not folder:
        return ""
    parts = folder.split("/")
    if len(folder) > MAX_FOLDER or not all(_COMPONENT.fullmatch(p) and p not in (".", "..") for p in parts):
        raise RuleEditRefused("A folder is a path from the repository's root, such as tests or src/api (letters, "
                      "digits, '.', '_' and '-'), or empty for the whole repository.")
    return folder


def _declines(db: Any, repo: str) -> list[dict]:
    rows = db.query("SELECT number, comment_id, path, title FROM review_findings WHERE repo = ? AND state = ? "
                    "AND declined_via IS NOT NULL ORDER BY id DESC LIMIT ?", [repo, "declined", MAX_DECLINES_READ])
    return list(reversed(rows))


def _kinds(rows: list[dict]) -> list[tuple[str, list[dict]]]:
    """Declines grouped by folder, then by alike text (each joins the first group it is alike)."""
    groups: list[tuple[str, str, list[dict]]] = []
    for row in rows:
        folder, text = folder_of(row["path"]), normalised(row["title"])
        home = next((g for f, t, g in groups if f == folder and similarity(t, text) >= SIMILAR), None)
        if home is None:
            groups.append((folder, text, [row]))
        else:
            home.append(row)
    return [(folder, group) for folder, _, group in groups]


def _known(known: list[tuple[str, str]], folder: str, finding: str) -> bool:
    """A kind whose folder is the same or under a known rule's (edited to a wider folder) is known."""
    return any((not f or folder == f or folder.startswith(f + "/")) and similarity(k, finding) >= SIMILAR
               for f, k in known)


def _wording(title: str, folder: str) -> str:
    where = f"in `{folder}/`" if folder else "anywhere in this repository"
    return checked_wording(f"Do not flag {where}: {title[:300]}")


def _learned(row: dict) -> Learned:
    evidence = tuple(Evidence(int(e["number"]), e.get("comment_id"), str(e.get("title", "")))
                     for e in json.loads(row["evidence"]))
    number = row.get("pull_request_number")
    return Learned(int(row["id"]), row["repo"], row["folder"], row["finding"], row["wording"], row["state"],
                   evidence, row["decided_by"], row.get("pull_request"), None if number is None else int(number),
                   row.get("pull_request_failure"), row.get("pull_request_state"), row.get("pull_request_path"),
                   row.get("pull_request_line"))
