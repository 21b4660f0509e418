"""The live bridge (bot/bridge.py) over real uvicorn and the `mcp` SDK's streamable-HTTP client."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from bot.bridge.admission import Admission
from bot.bridge.server import TOOL_NAMES, BridgeServer
from bot.bridge.tools import sandbox_for_run
from tests.bridge.conftest import call, git, mcp_session
from tests.entry_settings import current

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_tools_are_listed_under_server_name_bot(bridge):
    """A client sees server "bot" with the six tools, each with a schema and a description."""
    async with mcp_session(bridge.url, bridge.token) as session:
        listed = (await session.list_tools()).tools
    assert tuple(t.name for t in listed) == TOOL_NAMES
    assert all(t.description and t.input_schema["type"] == "object" for t in listed)
    assert bridge.bridge_for().server_name == "bot"


async def test_listing_tools_marks_bridge_connected(bridge):
    """The runner's strict-mode check: `connected` is set once a client listed the tools."""
    assert not bridge.connected.is_set()
    async with mcp_session(bridge.url, bridge.token) as session:
        await session.list_tools()
    assert bridge.connected.is_set()


async def test_request_without_token_gets_401(bridge):
    """No Authorization header: 401 with a Bearer challenge."""
    async with httpx.AsyncClient() as http:
        response = await http.post(bridge.url, json=INIT, headers=MCP_HEADERS)
    assert (response.status_code, response.headers["www-authenticate"]) == (401, "Bearer")


async def test_another_episodes_token_gets_401(bridge, worktree, recorder, tmp_path):
    """The token of a concurrent episode's bridge does not open this one."""
    other_run = recorder.start_run(agent="claude")
    async with BridgeServer(worktree, Admission(worktree), recorder, other_run,
                            scratch_root=tmp_path / "s2") as other:
        async with httpx.AsyncClient() as http:
            response = await http.post(bridge.url, json=INIT,
                                       headers=MCP_HEADERS | {"Authorization": f"Bearer {other.token}"})
    assert response.status_code == 401 and bridge.rejected_requests == 1


async def test_request_with_token_is_served(bridge):
    """The right bearer gets a normal MCP initialize answer."""
    async with httpx.AsyncClient() as http:
        response = await http.post(bridge.url, json=INIT,
                                   headers=MCP_HEADERS | {"Authorization": f"Bearer {bridge.token}"})
    assert response.status_code == 200


async def test_save_file_lands_and_is_recorded_enforced(bridge, worktree, recorder, run_id):
    """save_file creates the file in the worktree and records one enforced ok call."""
    text, is_error = await call(bridge, "save_file", path="pkg/new.py", content="X = 1\n")
    assert not is_error and (worktree / "pkg" / "new.py").read_text() == "X = 1\n"
    [event] = recorder.events(run_id)
    assert (event["tier"], event["tool"], event["outcome"]) == ("enforced", "save_file", "ok")
    assert json.loads(event["raw"])["path"] == "pkg/new.py"


async def test_ambiguous_edit_is_refused_and_file_unchanged(bridge, worktree, recorder, run_id):
    """edit_file whose old text occurs twice is refused; nothing is replaced."""
    before = (worktree / "app.py").read_text()
    text, is_error = await call(bridge, "edit_file", path="app.py", old_string="return a - b",
                                new_string="return a + b")
    assert is_error and "matches 2 places" in text
    assert (worktree / "app.py").read_text() == before
    assert recorder.events(run_id)[0]["outcome"] == "refused:ambiguous"


async def test_unique_edit_replaces_once(bridge, worktree):
    """edit_file with enough context to be unique replaces exactly that occurrence."""
    _, is_error = await call(bridge, "edit_file", path="app.py",
                             old_string="def add(a, b):\n    return a - b",
                             new_string="def add(a, b):\n    return a + b")
    assert not is_error and "return a + b" in (worktree / "app.py").read_text()
    assert (worktree / "app.py").read_text().count("return a - b") == 1


async def test_edit_of_missing_text_is_an_error(bridge, recorder, run_id):
    """old_string not in the file: an error the model can act on, recorded as error."""
    text, is_error = await call(bridge, "edit_file", path="app.py", old_string="nope", new_string="x")
    assert is_error and "not found" in text and recorder.events(run_id)[0]["outcome"] == "error"


async def test_delete_file_removes_it(bridge, worktree):
    """delete_file removes a tracked file from the worktree."""
    _, is_error = await call(bridge, "delete_file", path="README.md")
    assert not is_error and not (worktree / "README.md").exists()


@pytest.mark.parametrize("path,code", [("../outside", "outside"), (".git/config", "git_dir"),
                                       (".github/workflows/x.yml", "protected")])
async def test_forbidden_write_is_refused_and_recorded(bridge, worktree, recorder, run_id, path, code):
    """Writes outside, into .git/ or to a protected path are refused, not written, and recorded."""
    text, is_error = await call(bridge, "save_file", path=path, content="pwned")
    assert is_error and text.startswith("refused:")
    assert not (worktree / ".github").exists() and "pwned" not in (worktree / ".git" / "config").read_text()
    assert not (worktree.parent / "outside").exists()
    assert [(e["tier"], e["outcome"]) for e in recorder.events(run_id)] == [("enforced", f"refused:{code}")]


async def test_schema_violation_is_refused_and_recorded(bridge, recorder, run_id):
    """Missing arguments are refused by the bridge itself, and recorded like any call."""
    text, is_error = await call(bridge, "save_file", path="a.txt")
    assert is_error and "missing ['content']" in text
    assert recorder.events(run_id)[0]["outcome"] == "refused:bad_args"


async def test_call_budget_exhaustion_is_refused(worktree, recorder, run_id, tmp_path):
    """Past the call budget every call is refused with a budget outcome."""
    policy = Admission(worktree, max_calls=1)
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s") as bridge:
        await call(bridge, "save_file", path="a.txt", content="1")
        text, is_error = await call(bridge, "save_file", path="b.txt", content="2")
    assert is_error and [e["outcome"] for e in recorder.events(run_id)] == ["ok", "refused:budget"]


async def test_halt_refuses_next_call_and_is_recorded(worktree, recorder, run_id, tmp_path):
    """After halt(): on_halt runs, the next call is refused, and the record shows the halt."""
    halted_with = []
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, on_halt=halted_with.append,
                            scratch_root=tmp_path / "s") as bridge:
        await bridge.halt("stopped by @alice")
        text, is_error = await call(bridge, "save_file", path="late.txt", content="x")
    assert is_error and "halted" in text and not (worktree / "late.txt").exists()
    assert halted_with == ["stopped by @alice"]
    assert [(e["kind"], e["outcome"]) for e in recorder.events(run_id)] == [
        ("halt", "halted"), ("tool_call", "refused:halted")]


async def test_wall_clock_limit_halts_bridge(worktree, recorder, run_id, tmp_path):
    """When the wall-clock limit expires the bridge halts by itself."""
    done = asyncio.Event()
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, wall_clock_s=0.05,
                            on_halt=lambda reason: done.set(), scratch_root=tmp_path / "s") as bridge:
        await asyncio.wait_for(done.wait(), 10)
        assert "wall-clock" in bridge.halted


async def test_read_thread_returns_the_fetched_conversation(worktree, recorder, run_id, tmp_path):
    """read_thread returns what the bot fetched with its own token."""
    async def fetch() -> str:
        return "#12 Fix the adder\n\n@alice: add() subtracts"

    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, read_thread=fetch,
                            scratch_root=tmp_path / "s") as bridge:
        text, is_error = await call(bridge, "read_thread")
    assert not is_error and "add() subtracts" in text


async def test_progress_updates_are_throttled_latest_wins(worktree, recorder, run_id, tmp_path):
    """The first update shows at once; of two quick ones after it only the last is delivered."""
    shown: list[str] = []
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, on_progress=shown.append,
                            progress_interval_s=60, scratch_root=tmp_path / "s") as bridge:
        first, _ = await call(bridge, "report_progress", markdown="- [ ] one")
        second, _ = await call(bridge, "report_progress", markdown="- [x] one\n- [ ] two")
        await call(bridge, "report_progress", markdown="- [x] one\n- [x] two")
    assert (first, second) == ("shown", "queued (progress updates are throttled)")
    assert shown == ["- [ ] one", "- [x] one\n- [x] two"]


async def test_run_returns_exit_code_and_output(worktree, recorder, run_id, tmp_path):
    """run executes the command over the worktree and returns its exit code and output."""
    policy = Admission(worktree)
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(worktree, policy, tier=0, host=current().sandbox_host)) as bridge:
        text, is_error = await call(bridge, "run", command="cat README.md; exit 3")
    assert not is_error and text.startswith("exit code 3\n") and "# demo" in text
    assert json.loads(recorder.events(run_id)[0]["raw"])["exit_code"] == 3


async def test_run_output_is_capped(worktree, recorder, run_id, tmp_path):
    """A command's long output is cut to the cap, keeping its head and tail."""
    policy = Admission(worktree, max_output_bytes=1000)
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(worktree, policy, tier=0, host=current().sandbox_host)) as bridge:
        text, _ = await call(bridge, "run", command="seq 1 20000")
    assert "bytes omitted" in text and text.rstrip().endswith("20000") and len(text) < 1200


async def test_run_refused_by_floor_is_clear_tool_error(worktree, recorder, run_id, tmp_path):
    """A sandbox that refuses the floor yields a clear error; nothing runs at a lower tier."""
    policy = Admission(worktree)

    def tier0_asked_for_tier1(home):
        spawner, config = sandbox_for_run(worktree, policy, tier=0, host=current().sandbox_host)(home)
        config.min_tier = 1
        return spawner, config

    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=tier0_asked_for_tier1) as bridge:
        text, is_error = await call(bridge, "run", command="touch ran")
    assert is_error and "sandbox refused" in text and not (worktree / "ran").exists()


async def test_halt_kills_a_running_command(worktree, recorder, run_id, tmp_path):
    """A halt during `run` kills the sandboxed command."""
    policy = Admission(worktree)
    async with BridgeServer(worktree, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(worktree, policy, tier=0, host=current().sandbox_host)) as bridge:
        running = asyncio.create_task(call(bridge, "run", command="sleep 30; touch late"))
        while not bridge._running:
            await asyncio.sleep(0.02)
        await bridge.halt("stop")
        text, _ = await asyncio.wait_for(running, 10)
    assert not text.startswith("exit code 0") and not (worktree / "late").exists()


async def test_bearer_token_is_redacted_from_record(bridge, recorder, run_id):
    """The episode's own token never lands in the record, even if the agent echoes it."""
    await call(bridge, "save_file", path=bridge.token, content="x")
    assert bridge.token not in json.dumps(recorder.events(run_id))


async def test_run_that_retargets_git_pointer_is_undone(worktree, recorder, run_id, tmp_path):
    """A command rewriting a linked worktree's `.git` file finds it restored afterwards."""
    linked = tmp_path / "linked"
    git(worktree, "worktree", "add", "-q", "--detach", str(linked))
    pointer = (linked / ".git").read_bytes()
    policy = Admission(linked)
    async with BridgeServer(linked, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(linked, policy, tier=0, host=current().sandbox_host)) as bridge:
        text, _ = await call(bridge, "run", command="echo 'gitdir: evil' > .git")
    assert (linked / ".git").read_bytes() == pointer and "it was restored" in text


async def test_stop_event_halts_the_bridge(worktree, recorder, run_id, tmp_path):
    """Setting the job's stop event (`@bot stop`) halts the bridge and records why."""
    stop, halted = asyncio.Event(), asyncio.Event()
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, stop=stop,
                            on_halt=lambda reason: halted.set(), scratch_root=tmp_path / "s") as bridge:
        stop.set()
        await asyncio.wait_for(halted.wait(), 10)
        text, is_error = await call(bridge, "delete_file", path="README.md")
    assert is_error and (worktree / "README.md").exists()
    assert recorder.events(run_id)[0]["raw"] == "stopped (@bot stop or shutdown)"


async def test_unexpected_failure_is_recorded_as_error(bridge, worktree, recorder, run_id):
    """Editing a binary file fails inside the tool; the call is still answered and recorded."""
    (worktree / "blob.bin").write_bytes(b"\xff\xfe\x00binary")
    text, is_error = await call(bridge, "edit_file", path="blob.bin", old_string="a", new_string="b")
    assert is_error and "UnicodeDecodeError" in text
    assert recorder.events(run_id)[0]["outcome"] == "error"
