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

Events an automatic trigger takes first (`pull_request` opened, ready_for_review, synchronize, a
`bot:` label) queue that trigger's job; the worker runs the automations for the same event after it
(`riding`), so one delivery is one job.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from bot.intake import grammar
from bot.permissions import is_bot_author, own_accounts
from bot.workspace.repo_config_model import CONCLUSIONS

KIND = "automation"
# event -> the actions an automation may name for it (bot/workspace/repo_config_model.py)
EVENT_ACTIONS = {"issues": frozenset({"opened", "edited", "reopened", "labeled"}),
                 "issue_comment": frozenset({"created"}),
                 "pull_request": frozenset({"opened", "synchronize", "ready_for_review", "labeled"}),
                 "check_suite": frozenset({"completed"}),
                 "workflow_run": frozenset({"completed"})}
CHECK_EVENTS = frozenset({"check_suite", "workflow_run"})
_SHA = re.compile(r"^[0-9a-f]{40}$")
_LABEL = re.compile(r"^[^\x00-\x1f\x7f-\x9f]{1,50}$")
_FACT_KEYS = frozenset({"label", "conclusion", "head"})


@dataclass(frozen=True)
class EventFacts:
    """What an automation's matching and run read of its event, each value allowlisted."""

    event: str
    action: str
    label: str = ""  # the label added (`labeled`)
    conclusion: str = ""  # a check suite's or workflow run's
    head: str = ""  # the commit a check suite or workflow run checked

    @property
    def name(self) -> str:
        return f"{self.event}.{self.action}"

    def detail(self) -> str:
        words = [self.name] + [f"{key}={quote(value, safe='')}" for key, value in
                               (("label", self.label), ("conclusion", self.conclusion), ("head", self.head)) if value]
        return " ".join(words)


def read_detail(detail: str) -> EventFacts | None:
    """The facts a candidate's detail carries, or None when any word is outside the allowlist."""
    name, *words = detail.split(" ")
    event, _, action = name.partition(".")
    if action not in EVENT_ACTIONS.get(event, ()):
        return None
    facts: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in _FACT_KEYS or key in facts:
            return None
        facts[key] = unquote(value)
    found = EventFacts(event, action, **facts)
    return found if _allowed(found) else None


def _allowed(facts: EventFacts) -> bool:
    return ((not facts.label or bool(_LABEL.match(facts.label)))
            and (not facts.conclusion or facts.conclusion in CONCLUSIONS)
            and (not facts.head or bool(_SHA.match(facts.head))))


def candidate(event: str, data: dict[str, Any], handle: str) -> dict[str, Any] | None:
    action = data.get("action")
    if action not in EVENT_ACTIONS.get(event, ()):
        return None
    if event in CHECK_EVENTS:
        return _check(event, data, handle)
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


def _check(event: str, data: dict[str, Any], handle: str) -> dict[str, Any] | None:
    """A completed check suite or workflow run: its pull request is the first that belongs to this
    repository (GitHub lists none for a fork's: number 0, the worker finds it by the head commit)."""
    item = data["check_suite" if event == "check_suite" else "workflow_run"]
    app = item.get("app") or {}
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


def _label(data: dict[str, Any]) -> str:
    name = str((data.get("label") or {}).get("name") or "")
    return name if _LABEL.match(name) else ""


def _who(sender: dict[str, Any]) -> tuple[str, str]:
    return str(sender.get("login") or ""), str(sender.get("type") or "User")


def _sender(sender: dict[str, Any]) -> dict[str, Any]:
    return {"author": sender.get("login", ""), "author_id": sender.get("id"),
            "author_type": sender.get("type", "User")}


def _base(data: dict[str, Any]) -> dict[str, Any]:
    repo = data.get("repository") or {}
    return {"repo": repo.get("full_name"), "repo_id": repo.get("id"),
            "installation_id": (data.get("installation") or {}).get("id")}
