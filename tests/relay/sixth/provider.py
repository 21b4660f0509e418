"""The sixth wire API's provider, served by the test itself on loopback: it answers
POST /sixth/v1/ask (api.py describes the API) with the number of assistant turns it was sent and the
last user text, and keeps every request it received (path, headers, body)."""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SPENT = {"in": 7, "out": 3}


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class SixthProvider:
    def __init__(self) -> None:
        self.received: list[Received] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                provider.received.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                status, answer = provider.answer(self.path, body)
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path != "/sixth/v1/ask":
            return 404, {"problem": {"status": 404, "say": "no such path"}}
        turns = [t for t in body.get("prompt", []) if isinstance(t, dict)]
        prior = sum(1 for t in turns if t.get("role") == "assistant")
        last = next((t.get("text") for t in reversed(turns) if t.get("role") == "user"), "")
        return 200, {"model": body.get("model"), "answer": f"SIXTH_ANSWER prior_turns={prior} last_user={last}",
                     "spent": SPENT}

    def __enter__(self) -> SixthProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
