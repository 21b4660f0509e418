"""The answer comment: the agent's text, what the bot did with the change, and the provenance
block, cut to fit under GitHub's limit without ever cutting the provenance."""
from __future__ import annotations

import re
from collections.abc import Callable

from bot.episode import honesty
from bot.episode.turn import Turn
from bot.job import replies
from bot.job.context import Job
from bot.job.run import JobRun
from bot.job.tracking import MAX_COMMENT_CHARS
from bot.record import provenance, render
from bot.record.defang import defang
from bot.workspace.effects import Outcome

MAX_ANSWER_CHARS = 50_000
MIN_DIFF_CHARS = 500  # below this a cut diff is not worth showing
FIT_MARGIN_CHARS = 1_000  # redaction may lengthen the text a little


def compose(job_run: JobRun, ctx: Job, agent: str, turn: Turn, outcome: Outcome | None,
            touched: list[str] | None = None) -> str:
    """The answer comment: the agent's text (inert), what happened to the change, the provenance."""

    result = turn.result
    text = _text(job_run, agent, turn, outcome, touched, render.markdown)
    prov = provenance.build(job_run.recorder, turn.run_id, agent=agent, version=turn.version,
                            resumed=turn.resumed, fresh_reason=turn.fresh_reason,
                            duration_s=result.duration_s, usage=result.usage,
                            files_changed=list(outcome.files) if outcome else (touched or []),
                            session_id=result.session_id,
                            commit=outcome.commit_sha if outcome else None,
                            pr_url=outcome.pr_url if outcome else None,
                            change=outcome.summary() if outcome and outcome.commit_sha else None,
                            status="ok" if result.ok else "failed", run_page=ctx.settings.run_url(turn.run_id))
    body = fit_answer(text, outcome, len(prov.render("")))
    if ctx.mode.name == "local":  # a terminal: the parts, the agent's words as written
        plain = _text(job_run, agent, turn, outcome, touched, lambda words: words)
        ctx.mode.answered(ctx, job_run.secrets.mask(fit_answer(plain, outcome, len(prov.render("")))), prov)
    return prov.render(body)


def _text(job_run: JobRun, agent: str, turn: Turn, outcome: Outcome | None, touched: list[str] | None,
          shown: Callable[[str], str]) -> str:
    """The answer's words: the agent's text as `shown` makes it (inert markdown for GitHub, as
    written for a terminal), or what the bot says instead or before it."""
    result = turn.result
    text = shown(result.text.strip()) if result.text else ""
    if turn.unavailable is not None:  # what the relay saw, never the CLI's account
        text = provider_unavailable(agent, turn)
    elif not result.ok:
        text = f"❌ {agent} did not finish: {honesty.failure_reason(result)}" + (f"\n\n{text}" if text else "")
    elif not text:
        text = f"⚠️ {agent} finished without an answer."
    elif warning := honesty.blind_claim(agent, text, job_run.recorder.events(turn.run_id),
                                        bool(outcome.files if outcome else touched)):
        text = f"{warning}\n\n{text}"
    if turn.attempts and turn.unavailable is None:
        text = f"{fell_back(turn)}\n\n{text}"
    return text


def fell_back(turn: Turn) -> str:
    """The first line of an answer another agent gave: "Claude was overloaded; answered by Codex"."""
    tried = [(a.agent, a.unavailable.kind) for a in turn.attempts]
    return replies.fell_back(tried, turn.agent, turn.skipped)


def provider_unavailable(agent: str, turn: Turn) -> str:
    assert turn.unavailable is not None
    return replies.provider_unavailable(agent, turn.unavailable, fallback=turn.fallback, skipped=turn.skipped,
                                        tried=[(a.agent, a.unavailable.kind) for a in turn.attempts])


def fit_answer(text: str, outcome: Outcome | None, tail_chars: int) -> str:
    """The answer, what happened to the change and its diff, cut so that with the provenance
    (`tail_chars`) the comment stays under GitHub's limit: the provenance is never cut, the
    answer and the diff share what is left (each at least half when both are long)."""

    # the message names paths the agent chose: inert like the agent's own text
    note = f"\n\n{defang(outcome.message)}" if outcome is not None and outcome.kind != "none" else ""
    diff = outcome.diff if outcome is not None and note and outcome.diff else ""
    room = MAX_COMMENT_CHARS - tail_chars - len(note) - FIT_MARGIN_CHARS
    fence = _fence_for(diff)
    wrapper = f"\n\n<details><summary>diff</summary>\n\n{fence}diff\n{{}}\n{fence}\n</details>"
    diff_chars = len(wrapper.format(diff)) if diff else 0
    text = _cut(text, min(MAX_ANSWER_CHARS, max(room - diff_chars, room // 2)), "answer")
    body = text + note
    if diff:
        left = room - len(text) - len(wrapper.format(""))
        if left < MIN_DIFF_CHARS:
            body += "\n\n(The diff is too long to show here.)"
        else:
            body += wrapper.format(_cut(diff, left, "diff", fences=False))
    return body


def _cut(text: str, limit: int, what: str, fences: bool = True) -> str:
    """`text` shortened to at most `limit` characters with a note; a code fence left open by the
    cut is closed so the markdown after it (the provenance) still renders."""
    if len(text) <= limit:
        return text
    suffix = f"\n\n… ({what} truncated)"
    cut = text[:max(limit - len(suffix) - 4, 0)]
    if fences:  # a cut can leave a fence open or end a code span early: inert again
        cut = render.markdown(cut)
    return cut + suffix


def _fence_for(code: str) -> str:
    """A backtick fence longer than any backtick run in `code`, so no line of it can close the
    fence early (a diff's context line ` ```` would, and what follows would render as markdown)."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    return "`" * max(3, longest + 1)
