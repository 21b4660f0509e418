"""The tools offered only in a review run (bot/job/review_job.py), each one `Tool` object: findings
are kept by the run's collector (bot.review.findings.Collector), checked against the pull
request's diff, and posted as one review when the run ends.
"""
from __future__ import annotations

from collections.abc import Callable

from bot.bridge.admission import Refusal
from bot.bridge.tool import PATH, CallContext, Outcome, Tool, schema
from bot.review import severity as levels
from bot.review.diff_lines import OutsideDiff
from bot.review.findings import Collector

_SEVERITY = {"type": "string", "enum": ["important", "nit", "pre-existing"], "description": levels.DESCRIPTION}


def _kept(keep: Callable[[], str], args: dict) -> Outcome:
    """A finding kept by the run's collector; a line outside the diff is refused."""
    try:
        text = keep()
    except OutsideDiff as refused:
        raise Refusal("outside_diff", str(refused)) from None
    return text, {"path": args.get("path"), "line": args.get("line") or args.get("end_line"),
                  "severity": args.get("severity")}


def _collector(ctx: CallContext) -> Collector:
    if ctx.review is None:  # the server offers these only in a review run; never keep a finding nowhere
        raise Refusal("unknown_tool", "there are no review tools outside a review.")
    return ctx.review


async def _comment_on_line(ctx: CallContext, args: dict) -> Outcome:
    return _kept(lambda: _collector(ctx).comment(args), args)


async def _suggest_change(ctx: CallContext, args: dict) -> Outcome:
    return _kept(lambda: _collector(ctx).suggest(args), args)


async def _set_verdict(ctx: CallContext, args: dict) -> Outcome:
    return _collector(ctx).decide(args), {"verdict": args.get("verdict")}


async def _resolve_finding(ctx: CallContext, args: dict) -> Outcome:
    try:
        text = _collector(ctx).resolve(args)
    except OutsideDiff as refused:
        raise Refusal("unknown_finding", str(refused)) from None
    return text, {"finding": args.get("finding"), "status": args.get("status")}


TOOLS: tuple[Tool, ...] = (
    Tool("comment_on_line",
         "Add a review comment on a line of the pull request's diff (side RIGHT: the new code, numbered "
         "as in the new file; LEFT: removed code, old numbering). For several lines give start_line too. "
         "Only lines the diff shows are accepted. Comments are posted together as one review at the end.",
         schema({"path": PATH, "line": {"type": "integer", "description": "the (last) line commented on"},
                 "body": {"type": "string", "description": "the comment, in markdown"},
                 "side": {"type": "string", "enum": ["RIGHT", "LEFT"], "description": "RIGHT or LEFT"},
                 "start_line": {"type": "integer", "description": "first line of a multi-line comment"},
                 "severity": _SEVERITY},
                ["path", "line", "body", "side", "severity"]), _comment_on_line, needs="review"),
    Tool("suggest_change",
         "Suggest a committable change: replace lines start_line..end_line of the new file (they must be "
         "in the pull request's diff) with replacement (the complete new text of those lines). body says why.",
         schema({"path": PATH, "start_line": {"type": "integer", "description": "first line replaced"},
                 "end_line": {"type": "integer", "description": "last line replaced"},
                 "replacement": {"type": "string", "description": "the new text of those lines"},
                 "body": {"type": "string", "description": "why, in markdown"}, "severity": _SEVERITY},
                ["path", "start_line", "end_line", "replacement", "body", "severity"]), _suggest_change,
         needs="review"),
    Tool("set_verdict",
         "Your overall verdict on the pull request: approve, request_changes or comment (the default). "
         "The repository decides whether a review may approve or request changes.",
         schema({"verdict": {"type": "string", "enum": ["approve", "request_changes", "comment"],
                             "description": "approve, request_changes or comment"},
                 "reason": {"type": "string", "description": "one sentence why"}}, ["verdict"]), _set_verdict,
         needs="review"),
    Tool("resolve_finding",
         "Your verdict on an earlier finding of this pull request (listed in the request by number): fixed "
         "when the new code fixes it (its thread is answered and resolved), still_present when it does not "
         "(it stays open and is not posted again). fixed is refused for a finding whose file did not change.",
         schema({"finding": {"type": "integer", "description": "the earlier finding's number"},
                 "status": {"type": "string", "enum": ["fixed", "still_present"],
                            "description": "fixed or still_present"},
                 "reason": {"type": "string", "description": "one sentence why"}}, ["finding", "status"]),
         _resolve_finding, needs="review"),
)
