"""The one GitHub review a review job posts: its summary body and its inline comments (suggestions
as ```suggestion blocks GitHub can commit). Agent text is made inert (bot.record.render.markdown: no
link, image, mention or closing keyword in it acts); the suggestion fences are the bot's own, longer
than any backtick run in the replacement.

    payload = review_payload(merged, outcomes, scope, commit=sha, focus="error handling",
                             provenance=blocks, min_severity="nit", max_comments=10)
    # POST /repos/{o}/{r}/pulls/{n}/reviews

Each comment opens with its severity ("**Important:**", "Pre-existing:", "Nit:"); findings under
the repository's threshold are counted in the body, those over its cap listed there one line each.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.record import inert, render
from bot.review import severity as levels
from bot.review.findings import Finding, Scope
from bot.review.merge import Merged, tally
from bot.review.selection import Selection, select

MAX_BODY_CHARS = 60_000  # GitHub refuses a review body over 65,536
MAX_COMMENT_CHARS = 16_000
MAX_SUMMARY_CHARS = 4_000
EVENT = "COMMENT"


@dataclass
class AgentOutcome:
    agent: str
    ok: bool
    summary: str = ""  # the agent's final message
    reason: str | None = None  # why it failed
    verdict: str | None = None  # what the agent asked: APPROVE | REQUEST_CHANGES | COMMENT
    note: str = ""  # the bot's line when another agent answered in its place


def suggestion_block(replacement: str) -> str:
    code = replacement.rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}suggestion\n{code}\n{fence}" if code else f"{fence}suggestion\n{fence}"


def _view(finding: Finding) -> str:
    text: str = render.markdown(finding.body.strip())
    if finding.suggestion is not None:
        text = (text + "\n\n" if text else "") + suggestion_block(finding.suggestion)
    return text


def comment_body(item: Merged, several: bool) -> str:
    if not item.others:
        text = f"{levels.label(item.severity)}{_view(item.finding)}".rstrip()
        return _cut(text + (f"\n\n<sub>found by {', '.join(item.agents)}</sub>" if several else ""))
    views = [(", ".join(item.agents), item.finding)] + [(other.agent, other) for other in item.others]
    parts = ["**The agents differ here:**"]
    for who, finding in views:
        where = "" if (finding.first, finding.line) == (item.finding.first, item.finding.line) else \
            f" (lines {finding.first}-{finding.line})"
        view = _view(finding) if not where else render.markdown(finding.body.strip()) + (
            f"\n\n{_plain_code(finding.suggestion)}" if finding.suggestion is not None else "")
        rated = f" ({finding.severity})" if finding.severity else ""
        parts.append(f"**{who}**{where}{rated}:\n\n{view}")
    return _cut("\n\n".join(parts))


def _plain_code(code: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code.rstrip()}\n{fence}"


def _cut(text: str, limit: int = MAX_COMMENT_CHARS) -> str:
    return text if len(text) <= limit else render.markdown(text[:limit - 40]) + "\n\n… (comment truncated)"


def review_comment(item: Merged, several: bool) -> dict:
    finding = item.finding
    entry = {"path": finding.path, "line": finding.line, "side": finding.side,
             "body": comment_body(item, several)}
    if finding.start_line is not None:
        entry.update(start_line=finding.start_line, start_side=finding.side)
    return entry


def verdict(outcomes: list[AgentOutcome], allowed: bool) -> str:
    """The review's event: COMMENT unless the repository allows verdicts; then changes requested
    when any finished agent asks for them, approved only when every agent finished and approved."""
    if not allowed:
        return EVENT
    given = [o.verdict if o.ok else None for o in outcomes]
    if "REQUEST_CHANGES" in given:
        return "REQUEST_CHANGES"
    if given and all(v == "APPROVE" for v in given):
        return "APPROVE"
    return EVENT


def verdict_line(outcomes: list[AgentOutcome], event: str) -> str:
    asked = [f"{o.agent}: {o.verdict.lower().replace('_', ' ')}" for o in outcomes if o.ok and o.verdict
             and o.verdict != EVENT]
    if not asked:
        return ""
    if event == EVENT:
        return f"Verdicts asked ({'; '.join(asked)}); this repository posts reviews as comments (reviews.verdicts)."
    return f"Verdict: {event.lower().replace('_', ' ')} ({'; '.join(asked)})."


def review_payload(merged: list[Merged], outcomes: list[AgentOutcome], scope: Scope, *, commit: str,
                   focus: str = "", provenance: str = "", verdicts: bool = False, min_severity: str = "nit",
                   max_comments: int = 10, notes: list[str] | None = None) -> dict:
    several = len(outcomes) > 1
    event = verdict(outcomes, verdicts)
    chosen = select(merged, min_severity, max_comments)
    body = summary(merged, outcomes, scope, focus=focus, chosen=chosen, minimum=min_severity, notes=notes)
    if line := verdict_line(outcomes, event):
        body = f"{body}\n\n{line}"
    if provenance:
        body = f"{body}\n\n{provenance}"
    if len(body) > MAX_BODY_CHARS:
        body = body[:MAX_BODY_CHARS] + "\n\n… (truncated)"
    return {"commit_id": commit, "body": body, "event": event,
            "comments": [review_comment(item, several) for item in chosen.posted]}


def summary(merged: list[Merged], outcomes: list[AgentOutcome], scope: Scope, *, focus: str = "",
            chosen: Selection | None = None, minimum: str = "nit", notes: list[str] | None = None) -> str:
    chosen = chosen or Selection(list(merged))
    names = [o.agent for o in outcomes]
    lines = [f"### Review by {', '.join(names)}"] + [o.note for o in outcomes if o.note]
    if focus:
        lines.append(f"Focus: {inert.text(focus, 500)}")  # what the requester typed
    lines.append(coverage(scope))
    lines += notes or []  # what became of the earlier reviews' findings
    lines.append(findings_line(chosen.posted + chosen.summarised, scope, any(o.ok for o in outcomes), minimum))
    lines += [text for text in (over_the_cap(chosen), below_line(chosen, minimum)) if text]
    if len(outcomes) > 1 or any(not o.ok for o in outcomes):
        lines.append(_table(merged, outcomes))
    for outcome in outcomes:
        if outcome.ok and outcome.summary.strip():
            text: str = render.markdown(outcome.summary.strip())
            if len(text) > MAX_SUMMARY_CHARS:
                text = render.markdown(text[:MAX_SUMMARY_CHARS]) + "\n\n… (cut)"
            lines.append(f"<details><summary>{outcome.agent}'s summary</summary>\n\n{text}\n\n</details>")
    return "\n\n".join(lines)


def coverage(scope: Scope) -> str:
    if scope.since:
        skipped = "; ".join(f"{inert.code(name)} ({why})" for name, why in scope.skipped[:50])
        return (f"Since `{scope.since[:7]}`: {_files(len(scope.reviewed))}"
                + (f"; skipped: {skipped}" if skipped else "") + f" (of {_files(scope.total + len(scope.unchanged))} "
                f"in the pull request).")
    if not scope.skipped:
        return f"Reviewed {_files(len(scope.reviewed))}."
    skipped = "; ".join(f"{inert.code(name)} ({why})" for name, why in scope.skipped[:50])  # the PR author's names
    more = f" and {len(scope.skipped) - 50} more" if len(scope.skipped) > 50 else ""
    return (f"Reviewed {len(scope.reviewed)} of {_files(scope.total)}; skipped: {skipped}{more}.")


def findings_line(merged: list[Merged], scope: Scope, any_ok: bool, minimum: str = "nit") -> str:
    if not any_ok:
        return "❌ No agent finished its review."
    if not merged:
        return f"✅ {no_issues(minimum, len(scope.reviewed))}."
    shared = sum(1 for m in merged if len(m.agents) > 1)
    differ = sum(1 for m in merged if m.others)
    extra = (f", {shared} found by more than one agent" if shared else "") + \
        (f", {differ} where the agents differ" if differ else "")
    return f"**{len(merged)} comment{'s' if len(merged) != 1 else ''}**{extra}."


def check_summary(chosen: Selection, scope: Scope, minimum: str, review_url: str) -> str:
    """The check run's summary: the review's findings line, what the cap and threshold left out, a link."""
    lines = [coverage(scope), findings_line(chosen.posted + chosen.summarised, scope, True, minimum),
             over_the_cap(chosen), below_line(chosen, minimum), f"The review: {review_url}"]
    return "\n\n".join(line for line in lines if line)


def no_issues(minimum: str, files: int) -> str:
    above = "" if minimum == levels.lowest() else f" at or above {minimum}"
    return f"No issues found{above} in {_files(files)}"


def over_the_cap(chosen: Selection) -> str:
    """One line per finding the cap kept off the lines: where, its first line, its severity."""
    if not chosen.summarised:
        return ""
    lines = [f"Over the cap of {len(chosen.posted)} comments, also found:"]
    for item in chosen.summarised:
        where = f"{inert.code(item.finding.path)}:{item.finding.first}"  # the PR author's file name
        lines.append(f"- also: {where} — {_title(item.finding)} ({levels.named(item.severity)})")
    return "\n".join(lines)


def below_line(chosen: Selection, minimum: str) -> str:
    count = len(chosen.below)
    if not count:
        return ""
    return f"{count} finding{'s' if count != 1 else ''} below {minimum} not posted (reviews.min_severity)."


def _title(finding: Finding) -> str:
    first = next((line for line in finding.body.splitlines() if line.strip()), "")
    return inert.text(first, 120) if first else ("suggested change" if finding.suggestion is not None else "comment")


def _table(merged: list[Merged], outcomes: list[AgentOutcome]) -> str:
    counts = tally(merged, [o.agent for o in outcomes])
    rows = ["| agent | comments | shared | differs | status |", "|---|---|---|---|---|"]
    for outcome in outcomes:
        count = counts.get(outcome.agent, {"found": 0, "shared": 0, "differs": 0})
        status = "✅ finished" if outcome.ok else f"❌ failed: {_cell(outcome.reason or 'unknown')}"
        cells = (count["found"], count["shared"], count["differs"]) if outcome.ok else ("—", "—", "—")
        rows.append(f"| {outcome.agent} | {cells[0]} | {cells[1]} | {cells[2]} | {status} |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return render.markdown(" ".join(text.split())[:300]).replace("|", "\\|")


def _files(n: int) -> str:
    return f"{n} file{'s' if n != 1 else ''}"
