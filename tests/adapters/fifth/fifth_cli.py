#!/usr/bin/python3
"""A tiny agent CLI written for the tests: the fifth agent. It reads the request on stdin, keeps its
sessions in ~/.fifth/sessions/<id>.json, asks an OpenAI-compatible chat completions API at
$FIFTH_BASE_URL with the key in $FIFTH_API_KEY, and prints JSON lines: its session, the answer, the
usage. Before asking, it lists the tools of the MCP server at $FIFTH_MCP_URL (the bot's bridge,
the bearer in $BOT_BRIDGE_TOKEN) as an agent CLI does at start. `--resume ID` continues a session;
`--version` prints its version. Standard library only, so it runs inside the sandbox on the
system's Python."""
import json
import os
import sys
import urllib.request
import uuid
from pathlib import Path

VERSION = "fifth 1.0.0"
MODEL = "gpt-5-mini"  # its default model


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print(VERSION)
        return 0
    session = argv[argv.index("--resume") + 1] if "--resume" in argv else f"fifth-{uuid.uuid4().hex}"
    store = Path.home() / ".fifth" / "sessions" / f"{session}.json"
    if "--resume" in argv and not store.is_file():
        print(f"fifth: no session {session}", file=sys.stderr)
        return 3
    messages = json.loads(store.read_text()) if store.is_file() else []
    messages.append({"role": "user", "content": sys.stdin.read()})
    if os.environ.get("FIFTH_MCP_URL"):
        tools = list_tools(os.environ["FIFTH_MCP_URL"], os.environ.get("BOT_BRIDGE_TOKEN", ""))
        print(json.dumps({"type": "tools", "names": tools}), flush=True)
    reply = ask(messages)
    answer = reply["choices"][0]["message"]["content"]
    messages.append({"role": "assistant", "content": answer})
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps(messages))
    for line in ({"type": "session", "id": session}, {"type": "text", "text": answer},
                 {"type": "usage", **reply.get("usage", {})}):
        print(json.dumps(line), flush=True)
    return 0


def list_tools(url: str, token: str) -> list[str]:
    """MCP over streamable HTTP: initialize, then tools/list (the answer is JSON or one SSE event)."""
    names: list[str] = []
    for rpc in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "fifth", "version": "1.0.0"}}},
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


def ask(messages: list[dict]) -> dict:
    base = os.environ["FIFTH_BASE_URL"].rstrip("/")
    request = urllib.request.Request(
        f"{base}/v1/chat/completions", data=json.dumps({"model": MODEL, "messages": messages}).encode(),
        headers={"Authorization": f"Bearer {os.environ['FIFTH_API_KEY']}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
