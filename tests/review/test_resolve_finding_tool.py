"""The resolve_finding review tool: the agent's verdict on an earlier finding, which needs its file to
have changed before it may say fixed."""
from __future__ import annotations

import pytest

from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.review.diff_lines import DiffLines
from bot.review.findings import Collector, Prior, Scope
from tests.bridge.conftest import call, mcp_session, recorder, run_id, worktree  # noqa: F401

PATCH = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a - b  # sum\n"
CHANGED = Prior(12, "app.py", 2, "important", "add() subtracts", changed=True)
UNCHANGED = Prior(13, "lib.py", 5, "nit", "rename x", changed=False)


@pytest.fixture
def collector():
    return Collector("codex", DiffLines.from_files([{"filename": "app.py", "patch": PATCH}]), None,
                     [CHANGED, UNCHANGED])


@pytest.fixture
async def review_bridge(worktree, recorder, run_id, tmp_path, collector):  # noqa: F811
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                            review=collector) as server:
        yield server


async def test_resolve_finding_is_offered_in_a_review_run(review_bridge):
    async with mcp_session(review_bridge.url, review_bridge.token) as session:
        assert "resolve_finding" in [tool.name for tool in (await session.list_tools()).tools]


async def test_an_earlier_finding_whose_file_changed_is_kept_as_fixed(review_bridge, collector):
    text, is_error = await call(review_bridge, "resolve_finding", finding=12, status="fixed", reason="now adds")
    assert not is_error and "noted as fixed" in text and collector.verdicts == {12: "fixed"}


async def test_fixed_is_refused_for_a_finding_whose_file_did_not_change(review_bridge, collector):
    text, is_error = await call(review_bridge, "resolve_finding", finding=13, status="fixed")
    assert is_error and "lib.py, which has not changed since it was posted" in text and collector.verdicts == {}


async def test_an_unknown_finding_number_is_refused_with_the_open_ones(review_bridge, collector):
    text, is_error = await call(review_bridge, "resolve_finding", finding=99, status="still_present")
    assert is_error and "the open ones are: 12, 13" in text


def test_a_comment_on_a_file_unchanged_since_the_last_review_is_refused():
    scope = Scope(["app.py"], since="c" * 40, unchanged=["lib.py"])
    diff = DiffLines.from_files([{"filename": "app.py", "patch": PATCH},
                                 {"filename": "lib.py", "patch": "@@ -1 +1 @@\n-x\n+y"}])
    with pytest.raises(ValueError, match="lib.py has not changed since `ccccccc`"):
        Collector("codex", diff, scope).comment({"path": "lib.py", "line": 1, "side": "RIGHT", "body": "x",
                                                "severity": "nit"})
