"""The one intake decision: what an event asks of the bot, for the webhook, the automatic triggers
and the Action alike.

    decision = decide(Event(name, payload, delivery), handle)
    Ignore(why)       nothing to do; `why` is for the log
    Reply(spec)       a plain answer (`spec.reply`: help, status, an unknown agent's list, the
                      not-allowed notice), posted for anyone, capped for outsiders
    Episode(spec)     work that acts, run only after GitHub's permission check: an agent's episode
                      (a comment's `run`, or an automatic trigger), or a command such as `stop`

Raises Malformed (bot/intake/payload.py) for a payload without the fields its event has, or with
one of another type than bot/intake/github_payload.py declares. Makes no GitHub call and stores
nothing: the webhook queues the decision, the Action answers it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from adapters import base as adapters
from bot.intake import automation_event, grammar, triggers
from bot.intake.github_payload import Comment, Item, Payload, Review
from bot.intake.payload import Malformed, parsed, read_payload, require_shape, trigger_key
from bot.intake.spec import Automatic, JobSpec, ReplyKind, SpecError
from bot.permissions import association_may_trigger, is_bot_author

PLAIN_REPLIES = frozenset({"help", "status", "unknown_agent"})  # commands that only answer
NOT_ALLOWED = "not_allowed"


@dataclass(frozen=True)
class Event:
    name: str  # the X-GitHub-Event header, or $GITHUB_EVENT_NAME
    payload: dict[str, Any]
    delivery: str | None = None  # the X-GitHub-Delivery id; None in the Action
    via_app: bool = True  # delivered to the installed App; False: a workflow's event (no installation)


@dataclass(frozen=True)
class Ignore:
    why: str


@dataclass(frozen=True)
class Reply:
    spec: JobSpec
    stored: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # spec.to_dict(), checked

    kind = "reply"


@dataclass(frozen=True)
class Episode:
    spec: JobSpec
    stored: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # spec.to_dict(), checked

    @property
    def kind(self) -> str:
        """The queue's job kind: `episode` for an agent's run, else the command's own (`stop`)."""
        return "episode" if self.spec.command.kind == "run" else self.spec.command.kind


Decision = Ignore | Reply | Episode


def decide(event: Event, handle: str) -> Decision:
    """`handle`: the mention the bot answers to (the entry point's settings' BOT_HANDLE). An event
    nothing else acts on may still be one an automation runs on (bot/intake/automation_event.py),
    when it came to the installed App: the Action runs no automation."""
    data = read_payload(event.name, event.payload)
    decision = _decide(event, data, handle)
    if isinstance(decision, Ignore) and event.via_app and (found := parsed(
            lambda: automation_event.candidate(event.name, data, handle))):
        if refusal := _unless_uninstalled(event, found):
            return refusal
        return Episode(*_spec(event, data, found, grammar.Command(kind="run")))
    return decision


def _decide(event: Event, data: Payload, handle: str) -> Decision:
    if found := parsed(lambda: triggers.automatic(event.name, data, handle)):  # a label, an assignment, …
        caused, asked = found
        return _unless_uninstalled(event, caused) or Episode(*_spec(event, data, caused, asked))
    trigger = parsed(lambda: extract_trigger(event.name, data))
    if trigger is None:
        return Ignore(f"{event.name}.{data.get('action')} is not acted on")
    require_shape(trigger)
    if is_bot_author(trigger["author"], trigger["author_type"], handle):
        return Ignore("the author is a bot")
    if refusal := _unless_uninstalled(event, trigger):
        return refusal
    body = trigger.pop("body")
    command = grammar.parse(body, handle, tuple(adapters.names())) if grammar.may_mention(body, handle) else None
    if command is None:
        return Ignore(f"no @{handle} command")
    reply = reply_kind(command, trigger["association"])
    spec, stored = _spec(event, data, trigger, command, reply)
    return Reply(spec, stored) if reply is not None else Episode(spec, stored)


def reply_kind(command: grammar.Command, association: str | None) -> ReplyKind | None:
    """The reply a command gets instead of acting, or None when it acts. Plain replies are answered
    to anyone; the association is only the pre-filter for the rest: whoever passes it gets a job
    that runs only after GitHub's permission check."""
    kind = command.kind
    if kind == "help" or kind == "status" or kind == "unknown_agent":  # PLAIN_REPLIES, narrowed for the type
        return kind
    return None if association_may_trigger(association) else "not_allowed"


def _unless_uninstalled(event: Event, trigger: dict[str, Any]) -> Ignore | None:
    if event.via_app and not trigger["installation_id"]:
        return Ignore("not delivered to an installed GitHub App")
    return None


def _spec(event: Event, data: Payload, trigger: dict[str, Any], command: grammar.Command,
          reply: ReplyKind | None = None) -> tuple[JobSpec, dict[str, Any]]:
    """The job, and the dict the queue stores of it (read back once here, so never again)."""
    automatic = trigger.pop("automatic", None)
    spec = JobSpec(**require_shape(trigger), command=command, reply=reply, event=event.name,
                   action=data.get("action"), delivery=event.delivery,
                   trigger_key=parsed(lambda: trigger_key(event.name, data)),
                   automatic=Automatic(**automatic) if automatic else None)
    stored = spec.to_dict()
    try:  # what the queue will store is what the worker can read back, or the payload is refused now
        JobSpec.check_readable(stored)
    except SpecError as exc:
        raise Malformed(str(exc)) from None
    return spec, stored


def extract_trigger(event: str, data: Payload) -> dict[str, Any] | None:
    """Who said what where, for the events a comment can ask in; None for anything else."""
    action, repo = data.get("action"), data.get("repository") or {}
    base = {"repo": repo.get("full_name"), "repo_id": repo.get("id"),
            "installation_id": (data.get("installation") or {}).get("id")}
    if event == "issue_comment" and action == "created":
        issue, comment = data["issue"], data["comment"]
        return {**base, **_who(comment), "number": issue["number"], "is_pr": "pull_request" in issue,
                "title": issue.get("title", ""), "body": comment.get("body"),
                "target": {"type": "issue_comment", "id": comment["id"]}}
    if event == "pull_request_review_comment" and action == "created":
        pull, comment = data["pull_request"], data["comment"]
        top = comment.get("in_reply_to_id") or comment["id"]
        return {**base, **_who(comment), "number": pull["number"], "is_pr": True,
                "title": pull.get("title", ""), "body": comment.get("body"),
                "target": {"type": "review_comment", "id": comment["id"], "thread": top,
                           "path": comment.get("path"), "line": comment.get("line")}}
    if event == "pull_request_review" and action == "submitted":
        pull, review = data["pull_request"], data["review"]
        return {**base, **_who(review), "number": pull["number"], "is_pr": True,
                "title": pull.get("title", ""), "body": review.get("body"),
                "target": {"type": "review", "id": review["id"]}}
    if event in ("issues", "pull_request") and action == "opened":
        item = data["issue" if event == "issues" else "pull_request"]
        return {**base, **_who(item), "number": item["number"], "is_pr": event == "pull_request",
                "title": item.get("title", ""), "body": item.get("body"),
                "target": {"type": "issue", "id": item["number"]}}
    return None


def _who(item: Item | Comment | Review) -> dict[str, Any]:
    user = item.get("user") or {}
    return {"author": user.get("login", ""), "author_id": user.get("id"), "author_type": user.get("type", "User"),
            "association": item.get("author_association", "NONE")}
