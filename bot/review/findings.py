"""What one agent's review found, collected while its episode runs (nothing is posted one by one),
and which files fit the agent's size budget.

    scope = plan(files, budget_chars=60_000)       # Scope(reviewed, skipped)
    collector = Collector("codex", DiffLines.from_files(files), scope)
    collector.comment({"path": "app.py", "line": 3, "side": "RIGHT", "body": "...", "severity": "nit"})
    collector.suggest({"path": "app.py", "start_line": 3, "end_line": 3, "replacement": "...", "body": "..."})
    collector.findings                                # [Finding]
    collector.resolve({"finding": 12, "status": "fixed", "reason": "..."})   # an earlier finding's verdict
    collector.verdicts                                # {12: "fixed"}
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from bot.review import severity as levels
from bot.review.diff_lines import DiffLines, OutsideDiff

MAX_FINDINGS = 50  # per agent and review: more is noise
MAX_BODY_CHARS = 8_000
DEFAULT_BUDGET_CHARS = 60_000  # of patch text per agent
VERDICTS = {"approve": "APPROVE", "request_changes": "REQUEST_CHANGES", "comment": "COMMENT"}


@dataclass(frozen=True)
class Finding:
    agent: str
    path: str
    line: int
    side: str
    body: str
    start_line: int | None = None
    suggestion: str | None = None  # the replacement lines of a suggest_change
    severity: str | None = None  # important | pre-existing | nit, as the agent said (None: not given)

    @property
    def first(self) -> int:
        return self.start_line or self.line


@dataclass(frozen=True)
class Prior:
    """An open finding of an earlier review, offered to the agent to judge against the new code."""

    id: int
    path: str
    line: int
    severity: str | None
    title: str
    changed: bool  # its file changed since it was posted: the evidence a "fixed" needs


RESOLUTIONS = ("fixed", "still_present")


@dataclass
class Scope:
    """The files one agent reviews, and those it does not, each with the reason."""

    reviewed: list[str]
    skipped: list[tuple[str, str]] = field(default_factory=list)
    since: str | None = None  # an incremental review: the commit reviewed last
    unchanged: list[str] = field(default_factory=list)  # files of the pull request unchanged since then

    @property
    def total(self) -> int:
        return len(self.reviewed) + len(self.skipped)


def plan(entries: list[dict], budget_chars: int = DEFAULT_BUDGET_CHARS) -> Scope:
    """Files in GitHub's order while their patches fit the budget; the rest are named, never
    dropped silently."""
    scope, used = Scope([]), 0
    for entry in entries:
        name, size = entry.get("filename") or "?", len(entry.get("patch") or "")
        if not entry.get("patch"):
            scope.skipped.append((name, "no text diff"))
        elif used + size > budget_chars:
            scope.skipped.append((name, "over the budget"))
        else:
            scope.reviewed.append(name)
            used += size
    return scope


def _severity(args: dict) -> str | None:
    given = str(args.get("severity") or "").lower()
    return given if given in levels.LABELS else None


class Collector:
    """The review tools of one episode: each call is checked against the diff and kept."""

    def __init__(self, agent: str, diff: DiffLines, scope: Scope | None = None, priors: list[Prior] | None = None):
        self.agent, self.diff = agent, diff
        self.scope = scope or Scope(sorted(diff.files))
        self.priors = {prior.id: prior for prior in priors or []}
        self.verdicts: dict[int, str] = {}  # earlier finding id -> fixed | still_present, as the agent said
        self.findings: list[Finding] = []
        self.verdict: str | None = None  # APPROVE | REQUEST_CHANGES | COMMENT, if the agent gave one
        self.verdict_reason = ""

    def comment(self, args: dict) -> str:
        side = str(args.get("side") or "RIGHT").upper()
        finding = self._finding(args["path"], int(args["line"]), side, args["body"], args.get("start_line"))
        return self._keep(replace(finding, severity=_severity(args)))

    def suggest(self, args: dict) -> str:
        start, end = int(args["start_line"]), int(args["end_line"])
        finding = self._finding(args["path"], end, "RIGHT", args.get("body") or "",
                                start if start != end else None, suggestion=args["replacement"])
        return self._keep(replace(finding, severity=_severity(args)))

    def decide(self, args: dict) -> str:
        """The agent's verdict; whether it counts is the repository's choice (reviews.verdicts)."""
        self.verdict = VERDICTS[str(args["verdict"]).lower()]
        self.verdict_reason = str(args.get("reason") or "")[:MAX_BODY_CHARS]
        return (f"verdict {args['verdict']} noted. It is used only where the repository lets reviews approve or "
                f"request changes; otherwise the review is posted as a comment.")

    def resolve(self, args: dict) -> str:
        """The agent's verdict on an earlier finding; "fixed" needs its file to have changed since."""
        number, status = int(args["finding"]), str(args["status"]).lower()
        prior = self.priors.get(number)
        if prior is None:
            known = ", ".join(str(n) for n in self.priors) or "none"
            raise OutsideDiff(f"there is no open earlier finding {number}; the open ones are: {known}.")
        if status not in RESOLUTIONS:
            raise OutsideDiff(f"status must be one of {', '.join(RESOLUTIONS)}, not {status!r}.")
        if status == "fixed" and not prior.changed:
            raise OutsideDiff(f"finding {number} is on {prior.path}, which has not changed since it was posted, "
                              f"so it cannot be fixed: say still_present, or leave it.")
        self.verdicts[number] = status
        return (f"earlier finding {number} noted as {status.replace('_', ' ')}; "
                + ("its thread is resolved when the review is posted." if status == "fixed" else
                   "it stays open and is not posted again."))

    def _finding(self, path: str, line: int, side: str, body: str, start_line: object,
                 suggestion: str | None = None) -> Finding:
        path = path.removeprefix("./")
        if path in dict(self.scope.skipped):
            raise OutsideDiff(f"{path} is not part of this review ({dict(self.scope.skipped)[path]}); "
                              f"comment only on: {', '.join(self.scope.reviewed)}.")
        if path in self.scope.unchanged:
            raise OutsideDiff(f"{path} has not changed since `{(self.scope.since or '')[:7]}`, where this pull "
                              f"request was reviewed last; comment only on: {', '.join(self.scope.reviewed)}.")
        start = int(str(start_line)) if start_line not in (None, "", line) else None
        self.diff.check(path, side, line, start)
        if len(self.findings) >= MAX_FINDINGS:
            raise OutsideDiff(f"this review already holds {MAX_FINDINGS} comments; keep the most important "
                              f"and finish.")
        return Finding(self.agent, path, line, side, body[:MAX_BODY_CHARS], start, suggestion)

    def _keep(self, finding: Finding) -> str:
        self.findings.append(finding)
        where = f"{finding.path}:{finding.first}" + (f"-{finding.line}" if finding.start_line else "")
        kind = f"{levels.named(finding.severity)} " + ("suggestion" if finding.suggestion is not None else "comment")
        return (f"{kind} {len(self.findings)} on {where} ({finding.side}) added to your review; it is posted "
                f"with the others when you finish.")
