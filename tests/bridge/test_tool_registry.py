"""Each bridge tool is one declared object (name, description, schema and handler together), and
the server lists and dispatches from that registry by name: a new tool needs no server change."""
from __future__ import annotations

import inspect

import pytest

from bot.bridge import catalog
from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.bridge.tool import CallContext, Tool, schema
from tests.bridge.conftest import call, mcp_session, recorder, run_id, worktree  # noqa: F401


def test_every_bridge_tool_is_one_object_with_its_schema_and_handler():
    declared = catalog.offered(review=True)
    assert all(isinstance(tool, Tool) and tool.description and tool.schema["type"] == "object"
               and inspect.iscoroutinefunction(tool.handle) for tool in declared)
    assert len({tool.name for tool in declared}) == len(declared)


def test_the_review_tools_are_declared_in_the_same_shape_and_offered_only_in_a_review():
    review_only = {tool.name for tool in catalog.offered(review=True)} - {t.name for t in catalog.offered(review=False)}
    assert review_only == {tool.name for tool in catalog.REVIEW_TOOLS} and review_only
    assert all(tool.review_only for tool in catalog.REVIEW_TOOLS)


async def _shout(ctx: CallContext, args: dict) -> tuple[str, dict]:
    return args["word"].upper(), {"chars": len(args["word"])}


@pytest.fixture
def shout_tool(monkeypatch):
    tool = Tool("shout", "Say the word louder.", schema({"word": {"type": "string"}}, ["word"]), _shout)
    monkeypatch.setattr(catalog, "TOOLS", catalog.TOOLS + (tool,))
    return tool


async def test_a_tool_added_to_the_catalog_is_listed_and_called_through_the_server(
        shout_tool, worktree, recorder, run_id, tmp_path):  # noqa: F811
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s") as bridge:
        async with mcp_session(bridge.url, bridge.token) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
        answer = await call(bridge, "shout", word="hello")
        refused = await call(bridge, "shout", word=3)
    assert "shout" in names and answer == ("HELLO", False)
    assert refused[1] and "word must be a string" in refused[0]
    assert [(e["tool"], e["outcome"]) for e in recorder.events(run_id) if e["kind"] == "tool_call"] == [
        ("shout", "ok"), ("shout", "refused:bad_args")]
