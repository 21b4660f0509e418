"""Bridge test set-up: a git worktree, a recorder on a real SQLite file, a live bridge, an MCP client."""
from __future__ import annotations

import contextlib
import subprocess
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bot.bridge.admission import Admission
from bot.bridge.server import BridgeServer
from bot.record.recorder import Recorder


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def worktree(tmp_path) -> Path:
    root = tmp_path / "worktree"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# demo\n")
    (root / "app.py").write_text("def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init")
    return root


@pytest.fixture
def recorder(tmp_path) -> Recorder:
    return Recorder(tmp_path / "bot.db", secrets=["sk-test-SECRET-value-123"])


@pytest.fixture
def run_id(recorder) -> str:
    return recorder.start_run(agent="codex", conversation="octo/repo#12", sandbox_tier=1,
                              base_commit="3f2a9c1d0e")


@pytest.fixture
async def bridge(worktree, recorder, run_id, tmp_path):
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id,
                            scratch_root=tmp_path / "scratch") as server:
        yield server


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str | None):
    """The `mcp` SDK's own streamable-HTTP client, sending the bearer as the CLIs do."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


async def call(bridge: BridgeServer, tool: str, **args) -> tuple[str, bool]:
    """One tools/call over HTTP; returns (text, is_error)."""
    async with mcp_session(bridge.url, bridge.token) as session:
        result = await session.call_tool(tool, args)
    return result.content[0].text, bool(result.is_error)
