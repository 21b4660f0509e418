"""A re-review reads only what changed: the thread's "Changes" section of an incremental review shows
the pull request's diff of the files changed since the commit reviewed last, never the diff of a
file the push did not touch; a first review (and `review all`) still gets the whole diff."""
from __future__ import annotations

import asyncio
from types import SimpleNamespace

from bot.github.thread import ThreadData
from bot.job import thread_text
from bot.review.diff_lines import DiffLines
from bot.review.findings import Collector, Scope

FILES = [{"filename": "app.py", "status": "modified", "additions": 1, "deletions": 1,
          "patch": "@@ -1 +1 @@\n-return a + b\n+return a - b"},
         {"filename": "untouched.py", "status": "added", "additions": 1, "deletions": 0,
          "patch": "@@ -0,0 +1 @@\n+UNTOUCHED_SENTINEL = 1"}]


def thread_for(scope: Scope | None) -> str:
    data = ThreadData(repo="o/r", number=2, is_pr=True, issue={"title": "T", "body": "B", "user": {"login": "a"}},
                      comments=[], files=[dict(f) for f in FILES])
    collector = Collector("codex", DiffLines.from_files(FILES), scope) if scope is not None else None
    ctx = SimpleNamespace(thread=None, job_id=None)
    context = thread_text.ThreadContext(ctx, findings=collector)  # type: ignore[arg-type]
    context._data = data
    return asyncio.run(context.render(thread_text.PROMPT))


def test_a_re_review_thread_leaves_out_the_diff_of_files_unchanged_since_the_last_review():
    text = thread_for(Scope(["app.py"], since="5d211cd" + "0" * 33, unchanged=["untouched.py"]))
    assert "UNTOUCHED_SENTINEL" not in text and "+return a - b" in text
    assert "1 file of the pull request unchanged since `5d211cd` is not shown" in text


def test_a_first_review_thread_shows_the_whole_diff():
    assert "UNTOUCHED_SENTINEL" in thread_for(Scope(["app.py", "untouched.py"]))
    assert "UNTOUCHED_SENTINEL" in thread_for(None)
