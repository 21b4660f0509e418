"""The thread as the agent reads it: in its first prompt and from the bridge's read_thread tool.

    context = ThreadContext(ctx, attachments_dir(ctx.settings.data_dir, ctx.conversation))  # fetched when first asked
    text = await context.render(PROMPT)     # sized for a first prompt
    text = await context.render(READ)       # read_thread: more of everything
    context.record(recorder, run_id)        # what was removed, attached and left out, for the provenance

Everything people wrote is cleaned first (bot.record.hidden): an agent sees what a reader of the
page sees. Each part has its share of the budget; a part over its share says what was left out
(the oldest comments, the smallest hunks of a large diff), so the agent knows to look further.
"""
from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from adapters.base import Tier
from bot.github import thread as github
from bot.github.client import bot_logins, is_own_comment
from bot.github.thread import Check, ReviewThread, ThreadData
from bot.job.context import Job
from bot.record.defang import markers
from bot.record.hidden import clean_markdown, clean_plain
from bot.record.recorder import Recorder
from bot.review.findings import Collector
from bot.workspace.worktrees import conversation_slug as slug


@dataclass(frozen=True)
class Budget:
    """Characters per part of the rendered thread."""

    body: int
    comments: int
    reviews: int
    checks: int
    diff: int
    attachments: int = 3_000


PROMPT = Budget(body=8_000, comments=12_000, reviews=8_000, checks=10_000, diff=20_000)
READ = Budget(body=20_000, comments=50_000, reviews=30_000, checks=16_000, diff=60_000)  # under the bridge's cap
HUNK_LINES_IN_THREAD = 12  # of a review thread's hunk, the lines ending at the commented line


def attachments_dir(data_dir: Path, conversation: str) -> Path:
    """The conversation's read-only attachments folder under `data_dir` (bound into the sandbox at
    this path)."""
    folder = data_dir / "attachments" / slug(conversation)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    return folder


class ThreadContext:
    """The job's thread, fetched and cleaned once (on first use) and rendered to a budget.
    `findings`: a review episode's collector, whose scope says what an incremental review leaves out."""

    def __init__(self, ctx: Job, attachments: Path | None = None, findings: Collector | None = None) -> None:
        self.ctx, self.folder, self.findings = ctx, attachments, findings
        self.removed: Counter[str] = Counter()
        self._data: ThreadData | None = None
        self._lock = asyncio.Lock()

    async def data(self) -> ThreadData | None:
        async with self._lock:
            if self._data is None and self.ctx.thread is not None:
                hosts = github.Hosts.of(self.ctx.settings)
                data = await github.fetch(self.ctx.thread, is_pr=self.ctx.is_pr,
                                          target=getattr(self.ctx, "target", None), hosts=hosts)
                self.removed = clean(data, bot_logins(self.ctx.settings))
                if self.folder is not None:
                    urls = github.attachment_urls(human_texts(data), data.repo, hosts)
                    data.attachments = await github.download(urls, data.repo, self.folder,
                                                             self.ctx.thread.api.oauth_token, hosts)
                self._data = data
            return self._data

    async def render(self, budget: Budget) -> str:
        data = await self.data()
        return render(data, budget, current_job=getattr(self.ctx, "job_id", None),
                      since=reviewed_since(self.findings)) if data else ""

    def record(self, recorder: Recorder, run_id: str) -> None:
        """An enforced event: the bot built the agent's view of the thread; what it removed."""
        if self._data is None:
            return
        data = self._data
        summary = {"hidden_removed": dict(self.removed), "comments": len(data.comments),
                   "files": len(data.files), "failing_checks": len(data.checks),
                   "attachments": sum(1 for a in data.attachments if a.path),
                   "problems": data.problems}
        recorder.record(run_id, Tier.ENFORCED, "thread_context", outcome="ok", raw=json.dumps(summary))


# ---------------------------------------------------------------- cleaning

def clean(data: ThreadData, own_logins: frozenset[str]) -> Counter[str]:
    """Every text people, apps or CI wrote, cleaned in place; what was removed, by kind."""
    removed: Counter[str] = Counter()

    def markdown(holder: dict[str, Any], key: str) -> None:
        if holder.get(key):
            cleaned = clean_markdown(holder[key])
            holder[key] = cleaned.text
            removed.update(cleaned.removed)

    def plain(value: str | None) -> str | None:
        if not value:
            return value
        cleaned = clean_plain(value)
        removed.update(cleaned.removed)
        return cleaned.text

    data.issue["title"] = plain(data.issue.get("title"))
    markdown(data.issue, "body")
    for comment in data.comments + [c for t in data.review_threads for c in t.comments]:
        _take_our_markers(comment, own_logins)
    for item in data.comments + data.reviews + [c for t in data.review_threads for c in t.comments]:
        markdown(item, "body")
    if data.trigger is not None:
        markdown(data.trigger, "body")
        data.trigger["diff_hunk"] = plain(data.trigger.get("diff_hunk"))
    for thread in data.review_threads:
        thread.diff_hunk = cast(str, plain(thread.diff_hunk))  # a str stays a str
    for entry in data.files:
        entry["patch"] = plain(entry.get("patch"))
    for check in data.checks:
        _clean_check(check, markdown, plain)
    return removed


_MARKER = re.compile(r"<!-- (bot:[a-z]+ [^<>]*?) -->")


def _take_our_markers(comment: dict[str, Any], own_logins: frozenset[str]) -> None:
    """The bot's own job and run markers (only in the bot's own comments, outside code: anyone can
    paste one) say which comments are the bot's; they are not hidden content of the thread."""
    if not is_own_comment(comment, own_logins) or not comment.get("body"):
        return
    ours = [found for found in markers(comment["body"]) if _MARKER.fullmatch(found)]
    comment["_markers"] = [match[1] for found in ours if (match := _MARKER.fullmatch(found))]
    for found in ours:
        comment["body"] = comment["body"].replace(found, "", 1)


def _clean_check(check: Check, markdown: Callable[[dict[str, Any], str], None],
                 plain: Callable[[str | None], str | None]) -> None:
    holder = {"title": check.title, "summary": check.summary}
    markdown(holder, "title")
    markdown(holder, "summary")
    check.title, check.summary = holder["title"], holder["summary"]
    for note in check.annotations:
        note["message"] = plain(note.get("message"))
        note["title"] = plain(note.get("title"))
    check.log_tail = plain(check.log_tail)


def human_texts(data: ThreadData) -> list[str]:
    """The markdown people wrote (where attachments are linked), already cleaned."""
    items = [data.issue] + data.comments + data.reviews + [c for t in data.review_threads for c in t.comments]
    return [item.get("body") or "" for item in items]


# ---------------------------------------------------------------- rendering

def render(data: ThreadData, budget: Budget, current_job: int | None = None, since: Since | None = None) -> str:
    parts = [_opening(data, budget), _trigger(data), _checks(data, budget),
             _comments(data, budget, current_job), _reviews(data, budget, current_job), _diff(data, budget, since),
             _attachments(data, budget), _problems(data)]
    return "\n\n".join(p for p in parts if p)


def fence(text: str, lang: str = "") -> str:
    """A code block that the text inside cannot close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit].rstrip() + f"\n… ({len(text) - limit} more characters left out)"


def _who(item: dict[str, Any]) -> str:
    login = (item.get("user") or {}).get("login") or "someone"
    association = item.get("author_association")
    return f"@{login}" + (f" ({association})" if association and association != "NONE" else "")


def _opening(data: ThreadData, budget: Budget) -> str:
    kind = "Pull request" if data.is_pr else "Issue"
    head = f"# {kind} #{data.number}: {data.issue.get('title') or ''}\nopened by {_who(data.issue)}"
    if data.pull:
        base, tip = data.pull.get("base") or {}, data.pull.get("head") or {}
        head += f" · {base.get('ref')} ← {tip.get('label') or tip.get('ref')} at {(tip.get('sha') or '')[:7]}"
    body = (data.issue.get("body") or "").strip()
    return head + ("\n\n" + cut(body, budget.body) if body else "\n\n(no description)")


def _trigger(data: ThreadData) -> str:
    comment = data.trigger
    if not comment:
        return ""
    line = comment.get("line") or comment.get("original_line")
    start = comment.get("start_line")
    where = f"`{comment.get('path')}`" + (f" lines {start}–{line}" if start and start != line
                                         else f" line {line}" if line else " (the whole file)")
    hunk = comment.get("diff_hunk") or ""
    return (f"## The review comment the request was written on\n{where}, the diff hunk ending at that "
            f"line:\n{fence(hunk, 'diff')}\n{_who(comment)}: {(comment.get('body') or '').strip()}")


def _checks(data: ThreadData, budget: Budget) -> str:
    if not data.checks:
        return ""
    ref = data.checked_ref or ""
    where = ref if ref.startswith("run ") else f"commit {ref[:7]}"
    share = max(budget.checks // len(data.checks), 600)
    blocks = [cut(_check(check), share) for check in data.checks]
    return f"## Failing checks on {where}\n\n" + "\n\n".join(blocks)


def _check(check: Check) -> str:
    lines = [f"### {check.name}: {check.conclusion}" + (f" ({check.url})" if check.url else "")]
    if check.title:
        lines.append(check.title.strip())
    if check.summary:
        lines.append(cut(check.summary.strip(), 1_500))
    for note in check.annotations:
        place = f"{note.get('path')}:{note.get('start_line')}" if note.get("path") else ""
        lines.append(f"- {place} {note.get('title') or ''}: {note.get('message') or ''}".replace("  ", " "))
    if check.log_tail:
        lines.append("The end of the job's log:\n" + fence(check.log_tail, "text"))
    if check.log_note:
        lines.append(f"({check.log_note})")
    return "\n".join(lines)


def _comments(data: ThreadData, budget: Budget, current_job: int | None) -> str:
    rendered = []
    for comment in data.comments:
        text = _comment(comment, current_job)
        if text:
            rendered.append(text)
    if not rendered:
        return ""
    kept: list[str] = []
    used = 0
    for text in reversed(rendered):  # the newest matter most: the oldest are left out first
        text = cut(text, budget.comments) if not kept else text
        if kept and used + len(text) > budget.comments:
            break
        kept.append(text)
        used += len(text) + 2
    left = len(rendered) - len(kept)
    note = f"({left} earlier comment{'s' if left != 1 else ''} left out; read_thread has more.)\n\n" if left else ""
    return f"## Comments ({len(rendered)}, oldest first)\n\n" + note + "\n\n".join(reversed(kept))


def _comment(comment: dict[str, Any], current_job: int | None) -> str:
    said = _said(comment, current_job)
    if said is None:
        return ""
    if comment.get("_markers"):
        return f"**you (the bot), earlier**:\n{said}"
    when = (comment.get("created_at") or "")[:16].replace("T", " ")
    return f"**{_who(comment)}**" + (f" · {when}" if when else "") + f":\n{said}"


def _said(comment: dict[str, Any], current_job: int | None) -> str | None:
    """What a comment says; for the bot's own, its answer without the provenance, and nothing
    for this job's tracking comment or a bot comment that says nothing."""
    body = (comment.get("body") or "").strip()
    markers = comment.get("_markers") or []
    if not markers:
        return body
    if current_job is not None and f"bot:job {current_job}" in markers:
        return None
    body = body.split("<details>", 1)[0].strip()
    return body or None


def _reviews(data: ThreadData, budget: Budget, current_job: int | None = None) -> str:
    parts = []
    for review in data.reviews:
        body = (review.get("body") or "").strip()
        state = (review.get("state") or "").upper()
        if body or state in ("APPROVED", "CHANGES_REQUESTED"):
            parts.append(f"**{_who(review)}** {state.lower().replace('_', ' ')}" + (f":\n{body}" if body else ""))
    threads = [_review_thread(t, current_job) for t in data.review_threads]
    if not parts and not threads:
        return ""
    text = ""
    if parts:
        text += "## Reviews\n\n" + "\n\n".join(parts)
    if threads:
        text += ("\n\n" if text else "") + f"## Review threads ({len(threads)})\n\n" + "\n\n".join(threads)
    return cut(text, budget.reviews)


def _review_thread(thread: ReviewThread, current_job: int | None) -> str:
    where = (f"`{thread.path}`" + (f" line {thread.line}" if thread.line else "")
             + (" (outdated)" if thread.outdated else ""))
    hunk = "\n".join((thread.diff_hunk or "").split("\n")[-HUNK_LINES_IN_THREAD:])
    said = "\n".join(f"- **{'you (the bot), earlier' if c.get('_markers') else _who(c)}**: {text}"
                     for c in thread.comments if (text := _said(c, current_job)) is not None)
    return f"### {where}\n" + (fence(hunk, "diff") + "\n" if hunk else "") + said


# ---------------------------------------------------------------- the diff

@dataclass(frozen=True)
class Since:
    """An incremental review's view of the diff: the commit reviewed last and the pull request's
    files unchanged since then, whose diff was reviewed there and is not sent again."""

    commit: str
    unchanged: frozenset[str]


def reviewed_since(findings: Collector | None) -> Since | None:
    """An incremental review episode's (bot/job/review_job.py hands its collector); None for any other."""
    scope = findings.scope if findings is not None else None
    if scope is None or not scope.since:
        return None
    return Since(scope.since, frozenset(scope.unchanged))


def _diff(data: ThreadData, budget: Budget, since: Since | None = None) -> str:
    files = [f for f in data.files if since is None or f.get("filename") not in since.unchanged]
    note = _unchanged_note(since, len(data.files) - len(files))
    if not files:
        return f"## Changes\n{note}" if note else ""
    adds = sum(f.get("additions") or 0 for f in files)
    dels = sum(f.get("deletions") or 0 for f in files)
    head = (f"## Changes: {len(files)} file{'s' if len(files) != 1 else ''}"
            f"{' changed since the last review' if since else ''}, +{adds} −{dels}" + (f"\n{note}" if note else ""))
    blocks = [_file_block(f) for f in files]
    if sum(len(b) + 2 for b in blocks) <= budget.diff:
        return head + "\n\n" + "\n\n".join(blocks)
    return head + "\n\n" + diff_summary(files, budget.diff)


def _unchanged_note(since: Since | None, left: int) -> str:
    if since is None or not left:
        return ""
    files = "1 file of the pull request" if left == 1 else f"{left} files of the pull request"
    return f"({files} unchanged since `{since.commit[:7]}` {'is' if left == 1 else 'are'} not shown: reviewed there.)"


def _file_label(entry: dict[str, Any]) -> str:
    name = entry.get("filename") or "?"
    if entry.get("previous_filename"):
        name = f"{entry['previous_filename']} → {name}"
    added, removed = entry.get("additions") or 0, entry.get("deletions") or 0
    return f"`{name}` ({entry.get('status') or 'changed'}, +{added} −{removed})"


def _file_block(entry: dict[str, Any]) -> str:
    patch = entry.get("patch")
    if not patch:
        return f"### {_file_label(entry)}\n(no patch from GitHub: a binary file, or too large to show)"
    return f"### {_file_label(entry)}\n{fence(patch, 'diff')}"


def hunks(patch: str) -> list[str]:
    """A file's patch split at its `@@` lines."""
    return [h for h in re.split(r"(?m)^(?=@@ )", patch or "") if h.strip()]


def diff_summary(files: list[dict[str, Any]], limit: int) -> str:
    """Over budget: every file with its size, then the largest hunks that fit, and a note of what
    was left out."""
    listing = "\n".join(f"- {_file_label(f)}, patch {len(f.get('patch') or ''):,} characters" for f in files)
    listing = cut(listing, limit // 3)
    room = limit - len(listing) - 400
    candidates = [(len(h), i, j, h) for i, f in enumerate(files) for j, h in enumerate(hunks(f.get("patch") or ""))]
    chosen, used = set(), 0
    for size, i, j, _ in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        if used + size + 80 <= room:
            chosen.add((i, j))
            used += size + 80
    shown = []
    for i, f in enumerate(files):
        parts = [h for j, h in enumerate(hunks(f.get("patch") or "")) if (i, j) in chosen]
        if parts:
            shown.append(f"### `{f.get('filename')}`\n" + fence("".join(parts), "diff"))
    left = [c for c in candidates if (c[1], c[2]) not in chosen]
    left_files = len({c[1] for c in left})
    note = (f"Left out: {len(left)} of {len(candidates)} hunks ({sum(c[0] for c in left):,} characters) in "
            f"{left_files} file{'s' if left_files != 1 else ''}. Read those files in the worktree, or call "
            f"read_thread for a larger share of the diff.")
    return (f"The diff is larger than this view ({sum(c[0] for c in candidates):,} characters): the files "
            f"with their sizes, then the largest hunks.\n\n{listing}\n\n" + "\n\n".join(shown) + f"\n\n{note}")


def _attachments(data: ThreadData, budget: Budget) -> str:
    if not data.attachments:
        return ""
    lines = []
    for item in data.attachments:
        if item.path:
            lines.append(f"- `{item.path}` ({item.kind}, {_size(item.size)}), from {item.url}")
        else:
            lines.append(f"- not downloaded: {item.url} ({item.skipped})")
    return cut("## Files attached to the thread\nDownloaded by the bot into a read-only folder; open them "
               "with your file or image tools.\n" + "\n".join(lines), budget.attachments)


def _size(n: int) -> str:
    return f"{n / 1024:.0f} KB" if n >= 1024 else f"{n} bytes"


def _problems(data: ThreadData) -> str:
    if not data.problems:
        return ""
    return "## Not available\n" + "\n".join(f"- {p}" for p in data.problems)
