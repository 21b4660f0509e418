"""The review tools on the bridge: offered only in a review run, checked against the diff, recorded."""
from __future__ import annotations

import pytest

from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.review.diff_lines import DiffLines
from bot.review.findings import Collector
from tests.bridge.conftest import call, mcp_session, recorder, run_id, worktree  # noqa: F401

PATCH = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a - b  # sum\n"


@pytest.fixture
def collector():
    return Collector("codex", DiffLines.from_files([{"filename": "app.py", "patch": PATCH}]))


@pytest.fixture
async def review_bridge(worktree, recorder, run_id, tmp_path, collector):  # noqa: F811
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                            review=collector) as server:
        yield server


async def test_review_tools_are_offered_in_a_review_run(review_bridge):
    async with mcp_session(review_bridge.url, review_bridge.token) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
    assert {"comment_on_line", "suggest_change"} <= set(names)


async def test_review_tools_are_not_offered_outside_a_review(worktree, recorder, run_id, tmp_path):  # noqa: F811
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s") as bridge:
        async with mcp_session(bridge.url, bridge.token) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
        text, is_error = await call(bridge, "comment_on_line", path="app.py", line=2, side="RIGHT", body="x")
    assert "comment_on_line" not in names and is_error and "outside a review" in text


async def test_comment_on_a_line_of_the_diff_is_kept_not_posted(review_bridge, collector):
    text, is_error = await call(review_bridge, "comment_on_line", path="app.py", line=2, side="RIGHT", body="sign",
                                severity="nit")
    assert not is_error and "added to your review" in text
    assert [(f.path, f.line, f.side, f.body) for f in collector.findings] == [("app.py", 2, "RIGHT", "sign")]


async def test_comment_outside_the_diff_is_refused_with_the_lines_allowed(review_bridge, collector, recorder, run_id):  # noqa: F811
    text, is_error = await call(review_bridge, "comment_on_line", path="app.py", line=5, side="RIGHT", body="x",
                                severity="nit")
    assert is_error and text.startswith("refused: line 5 of app.py") and "RIGHT side: 1-2" in text
    assert collector.findings == []
    assert [e["outcome"] for e in recorder.events(run_id) if e["kind"] == "tool_call"] == ["refused:outside_diff"]


async def test_suggest_change_is_kept_with_its_replacement(review_bridge, collector):
    text, is_error = await call(review_bridge, "suggest_change", path="app.py", start_line=2, end_line=2,
                                replacement="    return a + b", body="add, not subtract", severity="important")
    assert not is_error and collector.findings[0].suggestion == "    return a + b"


async def test_set_verdict_is_kept_for_the_review(review_bridge, collector):
    text, is_error = await call(review_bridge, "set_verdict", verdict="request_changes", reason="add() is wrong")
    assert not is_error and collector.verdict == "REQUEST_CHANGES"
