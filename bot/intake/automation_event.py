"""An event an automation may run on (docs/automations.md), as a cheap candidate job.

The intake reads no repository, so it cannot know whether `.github/bot.yml` declares an
automation for the event: for the event kinds automations can use it queues one candidate job,
marked `automatic` of kind `automation` with the event and action as its detail; the worker reads
the default branch's configuration and runs the matching automations, or does nothing, silently
(bot/automations/event_run.py). The bot's own actions never make a candidate.

    trigger = candidate("issues", payload, handle)    # the job's trigger dict, or None
"""
from __future__ import annotations

from typing import Any

from bot.permissions import is_bot_author

KIND = "automation"
# event -> the actions an automation may name for it (bot/workspace/repo_config_model.py), this slice
EVENT_ACTIONS = {"issues": frozenset({"opened", "edited", "reopened", "labeled"})}


def candidate(event: str, data: dict[str, Any], handle: str) -> dict[str, Any] | None:
    action = data.get("action")
    item = data.get("issue")
    if action not in EVENT_ACTIONS.get(event, ()) or not isinstance(item, dict) or "pull_request" in item:
        return None
    sender = data.get("sender") or item.get("user") or {}
    who = {"author": sender.get("login", ""), "author_id": sender.get("id"),
           "author_type": sender.get("type", "User")}
    if is_bot_author(who["author"], who["author_type"], handle):
        return None
    repo = data.get("repository") or {}
    return {"repo": repo.get("full_name"), "repo_id": repo.get("id"),
            "installation_id": (data.get("installation") or {}).get("id"), **who,
            "association": item.get("author_association", "NONE"), "number": item["number"], "is_pr": False,
            "title": item.get("title", ""), "target": {"type": "issue", "id": item["number"]},
            "automatic": {"kind": KIND, "detail": f"{event}.{action}", "draft": False}}
