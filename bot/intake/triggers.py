"""Ways to call the bot besides a comment (docs/reviews.md): a label (`bot:review`, `bot:<agent>`), the
issue or pull request assigned to the bot's account, a review requested from it, and a pull
request opened (or made ready for review).

    found = automatic(event_name, payload, handle)      # (trigger, command) or None

Each becomes a job like a comment's (same queue, session map and provenance), marked
`automatic` with what triggered it. Whether the repository turned that trigger on, and whether
the person who caused it may trigger the bot, is decided by the worker (bot/job/gate.py)
from `.github/bot.yml` on the default branch: the intake makes no GitHub call. A trigger that is
off, or a person without the permission, ends without a word in the thread: nobody asked.

On a pull request a trigger asks for a review (`bot:<agent>`: by that agent); on an issue,
`bot:<agent>` or an assignment asks the agent to work on the issue.
"""
from __future__ import annotations

from typing import Any, Literal

from adapters import base as adapters
from bot.intake import grammar
from bot.intake.github_payload import Payload
from bot.permissions import is_bot_author, own_accounts

LABEL_PREFIX = "bot:"
ISSUE_REQUEST = ("Work on this issue ({why}): do what it asks, and say what you did and what is left.")


def automatic(event: str, data: Payload, handle: str) -> tuple[dict[str, Any], grammar.Command] | None:
    """`handle`: the bot's mention (the settings' BOT_HANDLE), whose accounts an assignment names."""
    action = data.get("action")
    if event not in ("issues", "pull_request") or not isinstance(data.get(_item_key(event)), dict):
        return None
    item = data[_item_key(event)]
    is_pr = event == "pull_request"
    sender = data.get("sender") or {}
    if action == "labeled":
        found = _label(data, is_pr)
    elif action == "assigned" and _own((data.get("assignee") or {}).get("login"), handle):
        found = ("assignment", "", None)
    elif action == "review_requested" and is_pr and _own((data.get("requested_reviewer") or {}).get("login"), handle):
        found = ("review_requested", "", None)
    elif action in ("opened", "ready_for_review") and is_pr:
        body = item.get("body")
        if grammar.may_mention(body, handle) and grammar.parse(body, handle, tuple(adapters.names())) is not None:
            return None  # a command in the body: the comment path answers it
        found = ("pull_request_opened", "", None)
        sender = item.get("user") or sender
    elif action == "synchronize" and is_pr:  # a push: an incremental review where reviews.on_push is set
        found = ("synchronize", str(data.get("after") or "")[:40], None)
    else:
        return None
    if found is None:
        return None
    kind, detail, agent = found
    who: dict[str, Any] = {"author": sender.get("login", ""), "author_id": sender.get("id"),
                           "author_type": sender.get("type", "User")}
    if is_bot_author(who["author"], who["author_type"], handle):
        return None
    trigger = {"repo": (data.get("repository") or {}).get("full_name"),
               "repo_id": (data.get("repository") or {}).get("id"),
               "installation_id": (data.get("installation") or {}).get("id"), **who,
               "association": item.get("author_association", "NONE"), "number": item["number"], "is_pr": is_pr,
               "title": item.get("title", ""), "target": {"type": "issue", "id": item["number"]},
               "automatic": {"kind": kind, "detail": detail, "draft": bool(item.get("draft"))}}
    return trigger, _command(kind, detail, agent, is_pr)


def _item_key(event: str) -> Literal["issue", "pull_request"]:
    return "issue" if event == "issues" else "pull_request"


def _own(login: str | None, handle: str) -> bool:
    return login is not None and login.lower() in own_accounts(handle)


def _label(data: Payload, is_pr: bool) -> tuple[str, str, str | None] | None:
    name = ((data.get("label") or {}).get("name") or "").strip().lower()
    if not name.startswith(LABEL_PREFIX):
        return None
    word = name[len(LABEL_PREFIX):]
    agent = adapters.canonical(word)
    if word == "review" and is_pr:
        return "label", name, None
    if agent in adapters.names():
        return "label", name, agent
    return None


def _command(kind: str, detail: str, agent: str | None, is_pr: bool) -> grammar.Command:
    if is_pr:
        return grammar.Command(kind="run", agent=agent, review=True, agents=(agent,) if agent else ())
    why = f"it was labelled `{detail}`" if kind == "label" else "it was assigned to you"
    return grammar.Command(kind="run", agent=agent, request=ISSUE_REQUEST.format(why=why))

