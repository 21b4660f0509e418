"""The review as a GitHub check run on the head commit (`reviews.check_run: true`), so branch
protection can require it: in progress while the agents review, then completed with the review's
summary and one annotation per finding.

    check = await start(thread, head_sha)                                  # POST .../check-runs
    await finish(thread, check, outcome(merged, fail_on="important", minimum="nit", summary=text))
    await finish(thread, check, errored("every agent failed"))             # conclusion neutral

The check run is the bot's report beside the review, never a reason to lose it: a call GitHub
refuses (the installation has not granted `checks: write`) is logged and the review goes on.
GitHub takes at most 50 annotations a request; they are sent in batches while the run is still
in progress, and the last request completes it. Agent text is inert (bot.record.render.markdown),
masked for the job's secrets, and every text passes the renderer's gate (`render.outgoing`).
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gidgethub import GitHubException

from bot.record import render
from bot.record.redact import redact, running_secrets
from bot.review import severity as levels
from bot.review.merge import Merged

log = logging.getLogger("bot.review.checks")
NAME = "bot review"
MAX_ANNOTATIONS = 50  # per request: GitHub refuses more
MAX_MESSAGE_CHARS = 4_000
MAX_SUMMARY_CHARS = 60_000  # GitHub's limit is 65,535


@dataclass
class Outcome:
    conclusion: str  # success | failure | neutral
    title: str
    summary: str
    annotations: list[dict] = field(default_factory=list)


async def start(thread: Any, head_sha: str) -> int | None:
    """The check run's id, in progress; None when GitHub refused it (logged)."""
    body = {"name": NAME, "head_sha": head_sha, "status": "in_progress",
            "output": {"title": render.outgoing("Review in progress"),
                       "summary": render.outgoing("The agents are reviewing this commit.")}}
    try:
        created = await thread._authed(lambda: thread.api.post(f"{thread.prefix}/check-runs", data=body))
    except GitHubException as exc:
        log.warning("could not create the review's check run: %s", exc)
        return None
    return int(created["id"])


async def finish(thread: Any, check_id: int | None, result: Outcome, secrets: Iterable[str] = ()) -> bool:
    """Annotations in batches of 50, then the conclusion; False when GitHub refused a request."""
    if check_id is None:
        return False
    every = [*secrets, *running_secrets()]
    output = {"title": sent(result.title, every), "summary": sent(result.summary, every, MAX_SUMMARY_CHARS)}
    notes = [{**note, **({"title": sent(note["title"], every)} if "title" in note else {}),
              "message": sent(note["message"], every)} for note in result.annotations]
    batches = [notes[i:i + MAX_ANNOTATIONS] for i in range(0, len(notes), MAX_ANNOTATIONS)] or [[]]
    url = f"{thread.prefix}/check-runs/{check_id}"
    try:
        for batch in batches[:-1]:
            await thread._authed(lambda b=batch: thread.api.patch(url, data={"output": {**output, "annotations": b}}))
        last = {"status": "completed", "conclusion": result.conclusion,
                "output": {**output, "annotations": batches[-1]}}
        await thread._authed(lambda: thread.api.patch(url, data=last))
    except GitHubException as exc:
        log.warning("could not complete the review's check run %s: %s", check_id, exc)
        return False
    return True


def sent(text: str, secrets: Iterable[str], limit: int | None = None) -> render.Rendered:
    """A text of the check run as it leaves: masked for the secrets, cut, through the renderer's gate."""
    return render.outgoing(redact(text, secrets)[:limit])


def outcome(merged: list[Merged], *, fail_on: str, minimum: str, summary: str) -> Outcome:
    """failure when a finding at or above `fail_on` remains, else success; the findings at or
    above the lower of the two thresholds are annotated, so a failure always shows why."""
    shown = [item for item in merged if levels.at_least(item.severity, min(minimum, fail_on, key=levels.rank))]
    failing = [item for item in merged if levels.at_least(item.severity, fail_on)]
    conclusion = "failure" if failing else "success"
    title = (f"{len(failing)} finding{'s' if len(failing) != 1 else ''} at or above {fail_on}" if failing
             else f"No findings at or above {fail_on}")
    return Outcome(conclusion, title, summary, [annotation(item) for item in shown if item.finding.side == "RIGHT"])


def errored(reason: str) -> Outcome:
    return Outcome("neutral", "The review did not finish", render.markdown(reason[:MAX_SUMMARY_CHARS - 100]))


def annotation(item: Merged) -> dict:
    """One finding on the head commit's lines (removed lines, LEFT, are not in it: not annotated)."""
    finding, rated = item.finding, levels.named(item.severity)
    note = {"path": finding.path, "start_line": finding.first, "end_line": finding.line,
            "annotation_level": levels.ANNOTATION_LEVELS[rated], "title": f"{rated} ({', '.join(item.agents)})",
            "message": _message(item)}
    return note


def _message(item: Merged) -> str:
    views = [item.finding.body.strip()] + [f"{other.agent}: {other.body.strip()}" for other in item.others]
    text = "\n\n".join(view for view in views if view) or "suggested change"
    return render.markdown(text[:MAX_MESSAGE_CHARS])  # the agent's words: no live mention or hidden marker


class CheckRun:
    """One review's check run, concluded once: by the review's result, or neutral when it errors."""

    def __init__(self, thread: Any, check_id: int | None, secrets: Iterable[str] = ()):
        self.thread, self.id, self.secrets, self.done = thread, check_id, secrets, False
        self.concluded = False  # GitHub took the conclusion

    @classmethod
    async def begin(cls, thread: Any, head_sha: str, *, enabled: bool,
                    secrets: Iterable[str] = ()) -> CheckRun:
        return cls(thread, await start(thread, head_sha) if enabled else None, secrets)

    async def conclude(self, result: Outcome) -> None:
        if self.id is None or self.done:
            return
        self.done = True
        self.concluded = await finish(self.thread, self.id, result, self.secrets)
