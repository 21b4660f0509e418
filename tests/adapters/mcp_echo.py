"""A tiny bearer-protected MCP server (streamable HTTP, the `mcp` SDK) for the adapter e2e tests.

    with EchoMCP(token="t") as server:     # uvicorn in a thread on 127.0.0.1:<random>
        server.url                          # http://127.0.0.1:PORT/mcp
        server.calls                        # [{"tool": "echo", "args": {...}}] of every tools/call
        server.unauthorized                 # requests refused for a missing or wrong bearer

One tool, `echo(text)`, answering "echo says: <text> (auth ok)".
"""
from __future__ import annotations

import hmac
import socket
import threading
import time

import uvicorn
from mcp.server.mcpserver import MCPServer


class EchoMCP:
    def __init__(self, token: str, server_name: str = "bot"):
        self.token = token
        self.calls: list[dict] = []
        self.unauthorized = 0
        mcp = MCPServer(server_name)

        @mcp.tool()
        def echo(text: str) -> str:
            """Echo the text back, proving the bearer was accepted."""
            self.calls.append({"tool": "echo", "args": {"text": text}})
            return f"echo says: {text} (auth ok)"

        self._app = _BearerGuard(mcp.streamable_http_app(stateless_http=True), self)
        self.port = _free_port()
        self._server = uvicorn.Server(uvicorn.Config(self._app, host="127.0.0.1", port=self.port,
                                                     log_level="error", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def __enter__(self) -> EchoMCP:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the echo MCP server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc) -> None:
        self._server.should_exit = True
        self._thread.join(5)


class _BearerGuard:
    """401 with WWW-Authenticate unless Authorization: Bearer <token>."""

    def __init__(self, app, owner: EchoMCP):
        self._app = app
        self._owner = owner

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            self._owner.unauthorized += 1
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"www-authenticate", b"Bearer"), (b"content-length", b"0")]})
            await send({"type": "http.response.body", "body": b""})
            return
        await self._app(scope, receive, send)

    def _authorized(self, scope) -> bool:
        header = dict(scope.get("headers") or []).get(b"authorization", b"")
        return hmac.compare_digest(header, f"Bearer {self._owner.token}".encode())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
