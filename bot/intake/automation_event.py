"""An event an automation may run on (docs/automations.md), as a cheap candidate job.

The intake reads no repository, so it cannot know whether `.github/bot.yml` declares an
automation for the event: for the event kinds automations can use it queues one candidate job,
marked `automatic` of kind `automation`; the worker reads the default branch's configuration and
runs the matching automations, or does nothing, silently (bot/automations/event_run.py). The bot's
own actions never make a candidate: its issues, comments, pull requests and pushes (the sender is
a bot), and the check suites its own App produced. The check results of its own push do make one:
they count against the autofix's `max_attempts` (bot/automations/attempts.py).

    trigger = candidate("issues", payload, handle)    # the job's trigger dict, or None
    facts = read_detail(spec.automatic.detail)        # EventFacts: event, action, label, conclusion, head

Every payload field read is named here, each checked against its allowlist (a check's conclusion
one of the grammar's, a head a 40-hex sha, a label at most 50 characters); anything else makes no
candidate. What the candidate carries past the queue is the detail: `<event>.<action>` then
`key=value` words (`label=` percent-encoded, `conclusion=`, `head=`), read back by `read_detail`
through the same allowlist.

A `dependabot_alert` or `code_scanning_alert` created carries the alert's fields an automation reads
(`ALERT_FIELDS`: its number, package and ecosystem, severity, GHSA and CVE ids, the advisory's
summary or the rule's description, rule id, location path and html_url), each through its own
pattern: a field outside it is dropped (and logged), an alert without a number makes no candidate.
Only the bot's own account is refused as the sender (GitHub's own bots raise alerts).

Events an automatic trigger takes first (`pull_request` opened, ready_for_review, synchronize, a
`bot:` label) queue that trigger's job; the worker runs the automations for the same event after it
(`riding`), so one delivery is one job.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from bot.intake import grammar
from bot.intake.github_payload import App, Payload, User, WorkflowRun
from bot.permissions import is_bot_author, own_accounts
from bot.workspace.repo_config_model import CONCLUSIONS

KIND = "automation"
# event -> the actions an automation may name for it (bot/workspace/repo_config_model.py)
EVENT_ACTIONS = {"issues": frozenset({"opened", "edited", "reopened", "labeled"}),
                 "issue_comment": frozenset({"created"}),
                 "pull_request": frozenset({"opened", "synchronize", "ready_for_review", "labeled"}),
                 "check_suite": frozenset({"completed"}),
                 "workflow_run": frozenset({"completed"}),
                 "dependabot_alert": frozenset({"created"}),
                 "code_scanning_alert": frozenset({"created"})}
CHECK_EVENTS = frozenset({"check_suite", "workflow_run"})
ALERT_EVENTS = frozenset({"dependabot_alert", "code_scanning_alert"})
log = logging.getLogger("bot.intake.automation_event")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_LABEL = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,50}$")
_FACT_KEYS = frozenset({"label", "conclusion", "head"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
SEVERITIES = frozenset({"low", "medium", "high", "critical", "none", "note", "warning", "error"})
MAX_SUMMARY_CHARS = 300


def _text(limit: int) -> Callable[[str], bool]:
    return lambda value: 0 < len(value) <= limit and not _CONTROL.search(value)


def _path(value: str) -> bool:
    return _text(500)(value) and not value.startswith("/") and ".." not in value.split("/")


# each alert field an automation reads, with what it must be (anything else is dropped)
ALERT_FIELDS: dict[str, Callable[[str], bool]] = {
    "number": lambda v: bool(re.fullmatch(r"[1-9][0-9]{0,9}", v)),
    "package": _text(214),
    "ecosystem": lambda v: bool(re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", v)),
    "severity": lambda v: v in SEVERITIES,
    "ghsa": lambda v: bool(re.fullmatch(r"GHSA(-[0-9a-z]{4}){3}", v)),
    "cve": lambda v: bool(re.fullmatch(r"CVE-[0-9]{4}-[0-9]{4,7}", v)),
    "summary": _text(MAX_SUMMARY_CHARS),
    "rule": lambda v: bool(re.fullmatch(r"[A-Za-z0-9_./:@+-]{1,200}", v)),
    "path": _path,
    "url": lambda v: bool(re.fullmatch(r"https?://[!-~]{1,500}", v)),
}


@dataclass(frozen=True)
class EventFacts:
    """What an automation's matching and run read of its event, each value allowlisted."""

    event: str
    action: str
    label: str = ""  # the label added (`labeled`)
    conclusion: str = ""  # a check suite's or workflow run's
    head: str = ""  # the commit a check suite or workflow run checked
    alert: tuple[tuple[str, str], ...] = ()  # an alert's fields (ALERT_FIELDS), in their order

    @property
    def name(self) -> str:
        return f"{self.event}.{self.action}"

    def detail(self) -> str:
        words = [self.name] + [f"{key}={quote(value, safe='')}" for key, value in
                               (("label", self.label), ("conclusion", self.conclusion), ("head", self.head),
                                *self.alert) if value]
        return " ".join(words)


def read_detail(detail: str) -> EventFacts | None:
    """The facts a candidate's detail carries, or None when any word is outside the allowlist."""
    name, *words = detail.split(" ")
    event, _, action = name.partition(".")
    if action not in EVENT_ACTIONS.get(event, ()):
        return None
    facts: dict[str, str] = {}
    alert: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        into = facts if key in _FACT_KEYS else alert if key in ALERT_FIELDS and event in ALERT_EVENTS else None
        if not sep or into is None or key in into:
            return None
        into[key] = unquote(value)
    found = EventFacts(event, action, **facts, alert=tuple(alert.items()))
    return found if _allowed(found) and (event not in ALERT_EVENTS or "number" in alert) else None


def _allowed(facts: EventFacts) -> bool:
    return ((not facts.label or bool(_LABEL.match(facts.label)))
            and (not facts.conclusion or facts.conclusion in CONCLUSIONS)
            and (not facts.head or bool(_SHA.match(facts.head)))
            and all(key in ALERT_FIELDS and ALERT_FIELDS[key](value) for key, value in facts.alert))


def candidate(event: str, data: Payload, handle: str) -> dict[str, Any] | None:
    action = data.get("action")
    if action not in EVENT_ACTIONS.get(event, ()):
        return None
    if event in CHECK_EVENTS:
        return _check(event, data, handle)
    if event in ALERT_EVENTS:
        return _alert(event, data, handle)
    item = data.get("pull_request" if event == "pull_request" else "issue")
    if not isinstance(item, dict) or (event == "issues" and "pull_request" in item):
        return None
    sender = data.get("sender") or item.get("user") or {}
    target: dict[str, Any] = {"type": "issue", "id": item["number"]}
    if event == "issue_comment":
        comment = data.get("comment") or {}
        if grammar.may_mention(comment.get("body"), handle):  # a mention is a command's, never an automation's
            return None
        sender, target = comment.get("user") or {}, {"type": "issue_comment", "id": comment["id"]}
    facts = EventFacts(event, str(action), label=_label(data) if action == "labeled" else "")
    if (action == "labeled" and not facts.label) or is_bot_author(*_who(sender), handle):
        return None
    return {**_base(data), **_sender(sender), "association": item.get("author_association", "NONE"),
            "number": item["number"], "is_pr": event == "pull_request" or "pull_request" in item,
            "title": item.get("title", ""), "target": target,
            "automatic": {"kind": KIND, "detail": facts.detail(), "draft": bool(item.get("draft"))}}


def riding(event: str | None, action: str | None, label: str = "") -> str | None:
    """The candidate's detail for an event an automatic trigger took first (its job runs the
    automations after the trigger), or None when automations do not run on it."""
    if event not in ("issues", "pull_request") or action not in EVENT_ACTIONS[event]:
        return None
    facts = EventFacts(event, action, label=label if action == "labeled" else "")
    return facts.detail() if _allowed(facts) else None


def _check(event: str, data: Payload, handle: str) -> dict[str, Any] | None:
    """A completed check suite or workflow run: its pull request is the first that belongs to this
    repository (GitHub lists none for a fork's: number 0, the worker finds it by the head commit)."""
    item: WorkflowRun = data["check_suite"] if event == "check_suite" else data["workflow_run"]
    app: App = (data["check_suite"].get("app") or {}) if event == "check_suite" else {}
    if event == "check_suite" and str(app.get("slug") or "").lower() in own_accounts(handle):
        return None  # the bot's own check runs (its reviews) never start an autofix
    facts = EventFacts(event, "completed", conclusion=str(item.get("conclusion") or ""),
                       head=str(item.get("head_sha") or ""))
    if not facts.conclusion or not facts.head or not _allowed(facts):
        return None
    repo_id = (data.get("repository") or {}).get("id")
    pulls = [p["number"] for p in item.get("pull_requests") or []
             if isinstance(p, dict) and ((p.get("base") or {}).get("repo") or {}).get("id") == repo_id]
    number = pulls[0] if pulls and isinstance(pulls[0], int) else 0
    sender = data.get("sender") or {}
    return {**_base(data), **_sender(sender), "association": "NONE", "number": number, "is_pr": True,
            "title": "", "target": {"type": event, "id": item["id"]},
            "automatic": {"kind": KIND, "detail": facts.detail(), "draft": False}}


def _alert(event: str, data: Payload, handle: str) -> dict[str, Any] | None:
    """A created alert, run in each matching automation's own issue (number 0: no thread of its own)."""
    sender = data.get("sender") or {}
    if str(sender.get("login") or "").lower() in own_accounts(handle):
        return None
    fields = alert_fields(event, data.get("alert") or {})
    if "number" not in fields:
        return None
    facts = EventFacts(event, "created", alert=tuple(fields.items()))
    return {**_base(data), **_sender(sender), "association": "NONE", "number": 0, "is_pr": False, "title": "",
            "target": {"type": event, "id": int(fields["number"])},
            "automatic": {"kind": KIND, "detail": facts.detail(), "draft": False}}


def alert_fields(event: str, alert: Mapping[str, Any]) -> dict[str, str]:
    """The alert's fields an automation reads, each kept only when its pattern allows it."""
    read = _dependabot(alert) if event == "dependabot_alert" else _code_scanning(alert)
    kept = {}
    for key, value in read.items():
        if value in ("", "None"):
            continue
        if ALERT_FIELDS[key](value):
            kept[key] = value
        else:
            log.info("%s: the alert's %s is outside its pattern: dropped", event, key)
    return kept


def _dependabot(alert: Mapping[str, Any]) -> dict[str, str]:
    dependency, advisory = _dict(alert.get("dependency")), _dict(alert.get("security_advisory"))
    package = _dict(dependency.get("package"))
    return {"number": str(alert.get("number")), "package": str(package.get("name") or ""),
            "ecosystem": str(package.get("ecosystem") or ""), "severity": str(advisory.get("severity") or ""),
            "ghsa": str(advisory.get("ghsa_id") or ""), "cve": str(advisory.get("cve_id") or ""),
            "summary": _cut(advisory.get("summary")), "path": str(dependency.get("manifest_path") or ""),
            "url": str(alert.get("html_url") or "")}


def _code_scanning(alert: Mapping[str, Any]) -> dict[str, str]:
    rule, instance = _dict(alert.get("rule")), _dict(alert.get("most_recent_instance"))
    return {"number": str(alert.get("number")), "rule": str(rule.get("id") or ""),
            "severity": str(rule.get("security_severity_level") or rule.get("severity") or ""),
            "summary": _cut(rule.get("description")), "path": str(_dict(instance.get("location")).get("path") or ""),
            "url": str(alert.get("html_url") or "")}


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _cut(value: object) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= MAX_SUMMARY_CHARS else text[:MAX_SUMMARY_CHARS - 1] + "…"


def _label(data: Payload) -> str:
    name = str((data.get("label") or {}).get("name") or "")
    return name if _LABEL.match(name) else ""


def _who(sender: User) -> tuple[str, str]:
    return str(sender.get("login") or ""), str(sender.get("type") or "User")


def _sender(sender: User) -> dict[str, Any]:
    return {"author": sender.get("login", ""), "author_id": sender.get("id"),
            "author_type": sender.get("type", "User")}


def _base(data: Payload) -> dict[str, Any]:
    repo = data.get("repository") or {}
    return {"repo": repo.get("full_name"), "repo_id": repo.get("id"),
            "installation_id": (data.get("installation") or {}).get("id")}
