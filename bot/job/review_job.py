"""`@bot review` on a pull request (docs/reviews.md): one or several agents review the same commit in
parallel episodes, each in its own worktree and sandbox with its own session and credentials;
their findings are merged (bot/review/merge.py) and posted as ONE GitHub review; the tracking
comment links it.

    text, status = await run(job_run, ctx, worktree, cancel, choose=..., episode=...)

`choose(ctx, repo_config) -> agent` and `episode(job_run, ctx, worktree, agent, tracking, cancel, findings=) -> Turn`
are the pipeline's own (agent checks, resume with the lost-session fallback), passed in so the two
modules do not import each other. An agent that fails (its provider answers 500, no credentials)
does not sink the others: the review names it and why.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from adapters.base import Tier
from bot.episode import honesty
from bot.episode.progress import LIVE_LABEL, Progress
from bot.episode.stop import Stop
from bot.episode.turn import Turn
from bot.job import answer, authority, conversations, replies, review_quiet, review_rules
from bot.job.context import Job
from bot.job.run import JobRun, stopped_by
from bot.job.thread_text import fence
from bot.job.tracking import TrackingComment
from bot.record import provenance, render
from bot.review import checks, followup, history, post
from bot.review.diff_lines import DiffLines
from bot.review.findings import DEFAULT_BUDGET_CHARS, Collector, Scope, plan
from bot.review.history import History
from bot.review.merge import merge
from bot.review.render import AgentOutcome, check_summary, no_issues, review_payload
from bot.review.rules import Applied
from bot.review.selection import Selection, select
from bot.review.since import MAX_DIFF_CHARS
from bot.workspace import worktrees

if TYPE_CHECKING:
    from adapters.base import Event
    from bot.github.thread import GitHubThread
    from bot.record.provenance import Provenance
    from bot.review.memory import Earlier
    from bot.workspace.repo_config import RepoConfig
    from bot.workspace.worktrees import Worktree

log = logging.getLogger("bot.job.review_job")
MAX_AGENTS = 4


@dataclasses.dataclass
class Review:
    """One agent's part of the review."""

    agent: str
    collector: Collector
    turn: Turn | None = None
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.turn is not None and bool(self.turn.result.ok) and self.failure is None


class AgentTracking:
    """One agent's view of the shared tracking comment (a `Progress`): its notes carry its name,
    and its run's live page is linked under its name when several agents review."""

    def __init__(self, tracking: TrackingComment, agent: str, several: bool):
        self._tracking, self._agent, self._several = tracking, agent, several
        self._prefix = f"{agent}: " if several else ""

    async def note(self, text: str, done: bool = True) -> None:
        await self._tracking.note(self._prefix + text, done)

    async def plan(self, markdown: str) -> None:
        if not self._several:  # several agents' plans would replace each other's
            await self._tracking.plan(markdown)

    async def on_event(self, event: Event) -> None:
        await self._tracking.on_event(event)

    def link_live(self, url: str, label: str = LIVE_LABEL) -> None:
        self._tracking.link_live(url, f"{self._agent} live" if self._several else label)


class Episode(Protocol):
    """How the review runs one agent's episode (bot/job/pipeline.py's, with its fallback)."""

    def __call__(self, job_run: JobRun, ctx: Job, worktree: Worktree, agent: str, tracking: Progress,
                 cancel: asyncio.Event, *, findings: Collector) -> Awaitable[Turn]: ...


async def run(job_run: JobRun, ctx: Job, worktree: Worktree, cancel: asyncio.Event, *,
              choose: Callable[[Job, RepoConfig], str], episode: Episode) -> tuple[str, str]:
    thread = ctx.thread  # the pull request's, asked once: every step below is given it
    if not ctx.is_pr or thread is None:
        raise Stop("A review needs a pull request: mention me with `review` on a pull request.")
    check = await checks.CheckRun.begin(thread, worktree.base_sha, enabled=worktree.config.reviews.check_run,
                                        secrets=job_run.secrets)
    try:
        return await _review(job_run, ctx, thread, worktree, cancel, choose, episode, check)
    except Stop as stop:
        await check.conclude(checks.errored(stop.text))
        raise
    except BaseException as exc:
        await asyncio.shield(check.conclude(checks.errored(f"the review stopped: {type(exc).__name__}")))
        raise


async def _review(job_run: JobRun, ctx: Job, thread: GitHubThread, worktree: Worktree,
                  cancel: asyncio.Event, choose: Callable[[Job, RepoConfig], str], episode: Episode,
                  check: checks.CheckRun) -> tuple[str, str]:
    agents, tracking = _agents(ctx, worktree.config, choose), job_run.tracking
    tracking.header = f"**{', '.join(agents)}** reviewing for @{ctx.requester}."
    files = await post.pull_files(thread)
    past = await history.recall(job_run.db, thread, worktree, agents, start_over=ctx.new_session,
                                may=authority.may_signal(thread, worktree.config))
    scope = _scope(files, past, worktree.config.reviews.budget or DEFAULT_BUDGET_CHARS)
    diff = DiffLines.from_files(files)  # the whole pull request's: GitHub places comments against it
    since = f" since `{scope.since[:7]}`" if scope.since else ""
    since += f" (its diff cut at {MAX_DIFF_CHARS:,} characters)" if past.change.cut else ""
    await tracking.note(f"reviewing {len(scope.reviewed)} of {scope.total} files at `{worktree.base_sha[:7]}`{since}")
    rules = await review_rules.read(worktree, scope, [rule.as_rule() for rule in past.learned])
    reviews = [Review(agent, Collector(agent, diff, scope, past.priors)) for agent in agents]
    several = len(reviews) > 1
    await asyncio.gather(*(_one(job_run, ctx, worktree, review, scope, AgentTracking(tracking, review.agent, several),
                                cancel, episode, past, rules, first=i == 0) for i, review in enumerate(reviews)))
    if cancel.is_set():
        raise Stop(replies.stopped(stopped_by(cancel), started=True), "cancelled")
    return await _publish(job_run, ctx, thread, worktree, reviews, scope, check, past, rules)


def _scope(files: list[dict[str, Any]], past: History, budget: int) -> Scope:
    """The whole pull request, or (incremental) only its files changed since the commit reviewed last."""
    if not past.change.incremental:
        return plan(files, budget)
    changed = set(past.change.files)
    scope = plan([f for f in files if f.get("filename") in changed], budget)
    scope.since = past.change.base
    scope.unchanged = [f.get("filename") or "?" for f in files if f.get("filename") not in changed]
    return scope


def _agents(ctx: Job, cfg: RepoConfig, choose: Callable[[Job, RepoConfig], str]) -> list[str]:
    named = list(dict.fromkeys(ctx.agents or ((ctx.agent,) if ctx.agent else cfg.reviews.agents)))[:MAX_AGENTS]
    if not named:
        return [choose(ctx, cfg)]
    return [choose(ctx.asking(dataclasses.replace(ctx.spec.command, agent=name)), cfg) for name in named]


async def _one(job_run: JobRun, ctx: Job, worktree: Worktree, review: Review, scope: Scope,
               tracking: AgentTracking, cancel: asyncio.Event, episode: Episode, past: History, rules: Applied, *,
               first: bool) -> None:
    """One agent's episode in its own worktree (the first agent uses the job's), recorded and
    mapped to the thread's session for that agent; a failure is kept, never raised."""
    own = worktree
    try:
        if not first:
            own = await worktrees.prepare(ctx.repo, f"{ctx.conversation} review {review.agent}", ctx.settings,
                                          token=ctx.token, pull_number=ctx.number)
            if own.base_sha != worktree.base_sha:  # every agent reviews the same commit, or none of this one
                raise Stop(f"the pull request moved to `{own.base_sha[:7]}` while the review started "
                           f"at `{worktree.base_sha[:7]}`")
        # an incremental review starts a fresh session: resuming would replay the whole first review
        agent_ctx = ctx.asking(dataclasses.replace(ctx.spec.command, agent=review.agent,
                                                   new_session=ctx.new_session or past.change.incremental,
                                                   request=review_request(ctx, scope, review.agent, past, rules)))
        turn = review.turn = await episode(job_run, agent_ctx, own, review.agent, tracking, cancel,
                                           findings=review.collector)
        review.agent = turn.agent or review.agent  # a `fallback` agent answered in its place
        conversations.record_turn(job_run.db, ctx.conversation, review.agent, turn.result.session_id,
                                  fresh=not turn.resumed)
        if not turn.result.ok:
            review.failure = honesty.failure_reason(turn.result)
    except Stop as stop:
        review.failure = stop.text
    except Exception as exc:  # one agent's failure must not sink the others
        log.exception("review by %s failed", review.agent)
        review.failure = render.markdown(f"{type(exc).__name__}: {exc}")  # may quote what the agent wrote
    finally:
        if own is not worktree:
            await worktrees.remove(own)
    await tracking.note(f"{len(review.collector.findings)} comments" if review.ok else f"failed ({review.failure})",
                        done=review.ok)


def review_request(ctx: Job, scope: Scope, agent: str, past: History | None = None,
                   rules: Applied | None = None) -> str:
    skipped = "; ".join(f"{name} ({why})" for name, why in scope.skipped[:40])
    focus = ctx.request.strip() or "correctness, bugs, security, error handling, missing tests"
    return (f"Review pull request #{ctx.number} as a careful code reviewer. Do not change any file.\n"
            f"Files to review ({len(scope.reviewed)} of {scope.total}): {', '.join(scope.reviewed[:200])}.\n"
            + (f"Not part of this review: {skipped}.\n" if skipped else "")
            + f"Focus: {focus}\n"
            + (review_rules.request_text(rules) if rules is not None else "") + "\n"
            "For each problem you find, call the `bot` tool comment_on_line (path, line, side RIGHT for the new "
            "code, body, severity), or suggest_change (path, start_line, end_line, replacement, body, severity) "
            "when you can show the fix as the complete new text of those lines. severity is important (a bug "
            "this change brings: fix before merging), nit (optional polish) or pre-existing (a real problem "
            "this change did not cause). The lines must be in the pull request's diff (shown above; "
            "read_thread shows more of it). A call outside the diff is refused with the lines you may use: "
            "correct it and call again. Your comments are posted together as one review when you finish.\n"
            "Finish with a short summary of your review; if you found no problems, say so."
            + (earlier_context(past) if past is not None else ""))


def earlier_context(past: History) -> str:
    """What the agent is told of the earlier reviews: the change since, the open and the declined findings."""
    parts = []
    if past.change.incremental:
        base = f"`{(past.change.base or '')[:7]}`"
        parts.append(f"This pull request was reviewed at {base}: review only what changed since, and keep your "
                     f"summary to it. The diff since {base}:\n{fence(past.change.diff, 'diff')}")
    if past.priors:
        listed = "\n".join(f"- {p.id}: {p.path}:{p.line} ({p.severity or 'unrated'}) {p.title}" for p in past.priors)
        parts.append("Earlier findings of this pull request, still open. For each, check the new code and call "
                     "the `bot` tool resolve_finding (finding: its number, status: fixed or still_present); never "
                     f"comment on them again:\n{listed}")
    if past.declined:
        listed = "\n".join(f"- {e.path}: {e.title}" for e in past.declined)
        parts.append(f"The maintainers declined these earlier findings: never raise them again:\n{listed}")
    return "".join(f"\n\n{part}" for part in parts)


async def _publish(job_run: JobRun, ctx: Job, thread: GitHubThread, worktree: Worktree, reviews: list[Review],
                   scope: Scope, check: checks.CheckRun, past: History, rules: Applied) -> tuple[str, str]:
    outcomes = [AgentOutcome(r.agent, r.ok, r.turn.result.text or "" if r.ok and r.turn else "", r.failure,
                             r.collector.verdict, answer.fell_back(r.turn) if r.turn and r.turn.attempts else "")
                for r in reviews]
    blocks = [_provenance(job_run, ctx, r, r.turn) for r in reviews if r.turn is not None]
    review_rules.record(job_run.recorder, [r.turn.run_id for r in reviews if r.turn], rules)
    if not any(r.ok for r in reviews):
        reasons = "\n".join(f"- {r.agent}: {r.failure}" for r in reviews)
        await check.conclude(checks.errored(f"Every agent failed.\n\n{reasons}"))
        return _tail(f"❌ No review was posted: every agent failed.\n\n{reasons}", blocks), "failed"
    settings, head = worktree.config.reviews, worktree.base_sha
    sifted = history.sift(merge([f for r in reviews if r.ok for f in r.collector.findings], [r.agent for r in reviews]),
                          past)
    fixed = followup.fixed_findings(past, [r.collector.verdicts for r in reviews if r.ok])
    payload = review_payload(sifted.new, outcomes, scope, commit=head, focus=ctx.request,
                             provenance="\n\n".join(b.summary_block() for b in blocks), verdicts=settings.verdicts,
                             min_severity=settings.min_severity, max_comments=settings.max_comments,
                             notes=[*followup.notes(past, sifted, fixed, head), *filter(None, [rules.note()])])
    chosen = select(sifted.new, settings.min_severity, settings.max_comments)
    if review_quiet.nothing_to_say(settings, chosen, all_finished=all(r.ok for r in reviews), event=payload["event"]):
        return await _quiet(job_run, ctx, thread, worktree, reviews, scope, check, past, sifted, fixed, chosen,
                            blocks)
    await ctx.refresh_token()
    marker = f"<!-- bot:review {ctx.job_id} -->" if ctx.job_id is not None else None
    try:
        posted = await post.post_review(thread, payload, job_run.secrets, marker=marker,
                                        still_allowed=ctx.mode.still_allowed(ctx, worktree.config))
    except post.NotPosted as refused:
        await check.conclude(checks.errored(f"No review was posted: {refused}"))
        return _tail(f"❌ No review was posted: {refused}", blocks), "failed"
    _record(job_run, ctx, reviews, str(posted.get("id") or ""),
            f"{posted.get('html_url') or ''} ({len(payload['comments'])} comments)")
    await followup.close_fixed(job_run.db, thread, past, fixed, head)
    await followup.remember(job_run.db, thread, posted, chosen, [r.agent for r in reviews if r.ok], head,
                            job_run.secrets)
    where = posted.get("html_url") or "on this pull request"
    result = checks.outcome(sifted.new + sifted.repeated, fail_on=settings.fail_on, minimum=settings.min_severity,
                            summary=check_summary(chosen, scope, settings.min_severity, where))
    await check.conclude(result)
    return _tail(_answer(where, chosen, scope, reviews, check, result, len(fixed), settings.min_severity),
                 blocks), "done"


async def _quiet(job_run: JobRun, ctx: Job, thread: GitHubThread, worktree: Worktree, reviews: list[Review],
                 scope: Scope, check: checks.CheckRun, past: History, sifted: history.Sifted,
                 fixed: list[Earlier], chosen: Selection, blocks: list[Provenance]) -> tuple[str, str]:
    """Nothing to say (bot/job/review_quiet.py): no review. The fixed threads are answered, the commit
    remembered, the check run concluded and a 👍 put on the request; the tracking comment is taken
    back when the 👍 or the check run says it, else it is one line."""
    settings, head, agents = worktree.config.reviews, worktree.base_sha, [r.agent for r in reviews]
    await ctx.refresh_token()
    if refused := await ctx.mode.still_allowed(ctx, worktree.config)():
        await check.conclude(checks.errored(f"No review was posted: {refused}"))
        return _tail(f"❌ No review was posted: {refused}", blocks), "failed"
    nothing = review_quiet.said(settings.min_severity, len(scope.reviewed))
    _record(job_run, ctx, reviews, "quiet", f"no review posted: {nothing} (reviews.quiet)")
    await followup.close_fixed(job_run.db, thread, past, fixed, head)
    await followup.remember(job_run.db, thread, {}, chosen, agents, head, job_run.secrets)
    summary = check_summary(chosen, scope, settings.min_severity, f"none posted, {nothing} (reviews.quiet)")
    await check.conclude(checks.outcome(sifted.new + sifted.repeated, fail_on=settings.fail_on,
                                        minimum=settings.min_severity, summary=summary))
    if (await review_quiet.thumbs_up(ctx) or check.concluded) and await job_run.tracking.withdraw():
        return "", "done"
    line = review_quiet.one_line(agents, head, settings.min_severity, len(scope.reviewed))
    return line + "".join(f"\n{b.marker()}" for b in blocks), "done"


def _answer(where: str, chosen: Selection, scope: Scope, reviews: list[Review], check: checks.CheckRun,
            result: checks.Outcome, fixed: int, minimum: str) -> str:
    lines = [f"✅ Review posted: {where} — {_counted(chosen, scope, minimum)}, "
             f"by {', '.join(r.agent for r in reviews if r.ok)}."]
    if fixed:
        lines.append(f"{fixed} earlier finding{'s' if fixed != 1 else ''} fixed: answered and resolved.")
    if check.concluded:
        lines.append(f"Check run `{checks.NAME}`: {result.conclusion} ({result.title[0].lower()}{result.title[1:]}).")
    lines += [f"❌ {r.agent} failed: {r.failure}" for r in reviews if not r.ok]
    return "\n\n".join(lines)


def _counted(chosen: Selection, scope: Scope, minimum: str) -> str:
    posted, listed = len(chosen.posted), len(chosen.summarised)
    if not posted:
        text = no_issues(minimum, len(scope.reviewed))
        return text[0].lower() + text[1:]
    return f"{posted} comment{'s' if posted != 1 else ''}" + (f" and {listed} more listed in it" if listed else "")


def _provenance(job_run: JobRun, ctx: Job, review: Review, turn: Turn) -> Provenance:
    result = turn.result
    return provenance.build(job_run.recorder, turn.run_id, agent=review.agent,
                            version=turn.version, resumed=turn.resumed, fresh_reason=turn.fresh_reason,
                            duration_s=result.duration_s, usage=result.usage, session_id=result.session_id,
                            status="ok" if review.ok else "failed", run_page=ctx.settings.run_url(turn.run_id))


def _tail(text: str, blocks: list[Provenance]) -> str:
    return text + "".join(f"\n\n{b.details_block()}\n{b.marker()}" for b in blocks)


def _record(job_run: JobRun, ctx: Job, reviews: list[Review], outcome: str, raw: str) -> None:
    """The bot's own act, in each agent's run: the review it posted (its id), or "quiet"."""
    recorder = job_run.recorder
    for review in reviews:
        if review.turn is not None:
            recorder.record(review.turn.run_id, Tier.ENFORCED, "review", outcome=outcome, raw=raw)
