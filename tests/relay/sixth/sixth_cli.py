#!/usr/bin/python3
"""A tiny agent CLI written for the tests: the sixth agent. It reads the request on stdin, keeps its
sessions in ~/.sixth/sessions/<id>.json, asks the sixth wire API at $SIXTH_BASE_URL/sixth/v1/ask
with the key in $SIXTH_API_KEY (header x-api-key), and prints JSON lines: its session, the answer,
what it spent. It also sends a field the API does not declare (`telemetry`). Before asking, it lists
the tools of the MCP server at $SIXTH_MCP_URL (the bot's bridge, the bearer in $BOT_BRIDGE_TOKEN)
as an agent CLI does at start. `--resume ID`
continues a session; `--version` prints its version. Standard library only."""
import json
import os
import sys
import urllib.request
import uuid
from pathlib import Path

VERSION = "sixth 1.0.0"
MODEL = "sixth-small"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print(VERSION)
        return 0
    session = argv[argv.index("--resume") + 1] if "--resume" in argv else f"sixth-{uuid.uuid4().hex}"
    store = Path.home() / ".sixth" / "sessions" / f"{session}.json"
    if "--resume" in argv and not store.is_file():
        print(f"sixth: no session {session}", file=sys.stderr)
        return 3
    turns = json.loads(store.read_text()) if store.is_file() else []
    turns.append({"role": "user", "text": sys.stdin.read()})
    if os.environ.get("SIXTH_MCP_URL"):
        tools = list_tools(os.environ["SIXTH_MCP_URL"], os.environ.get("BOT_BRIDGE_TOKEN", ""))
        print(json.dumps({"type": "tools", "names": tools}), flush=True)
    reply = ask(turns)
    turns.append({"role": "assistant", "text": reply["answer"]})
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(turns))
    for line in ({"type": "session", "id": session}, {"type": "text", "text": reply["answer"]},
                 {"type": "spent", **reply.get("spent", {})}):
        print(json.dumps(line), flush=True)
    return 0


def list_tools(url: str, token: str) -> list[str]:
    """MCP over streamable HTTP: initialize, then tools/list (the answer is JSON or one SSE event)."""
    names: list[str] = []
    for rpc in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "sixth", "version": "1.0.0"}}},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}):
        request = urllib.request.Request(url, data=json.dumps(rpc).encode(), headers={
            "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
        data = next((line[5:] for line in text.splitlines() if line.startswith("data:")), text)
        result = json.loads(data).get("result") or {}
        names = [tool["name"] for tool in result.get("tools", [])] or names
    return names


def ask(turns: list[dict]) -> dict:
    base = os.environ["SIXTH_BASE_URL"].rstrip("/")
    body = {"model": MODEL, "limit": 64, "prompt": turns, "telemetry": {"machine": "sandbox"}}
    request = urllib.request.Request(f"{base}/sixth/v1/ask", data=json.dumps(body).encode(), headers={
        "x-api-key": os.environ["SIXTH_API_KEY"], "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
