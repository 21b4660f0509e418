"""A threaded HTTP server on 127.0.0.1 (random port) for the tests' fakes: `with Fake() as f: f.url`."""
from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalHTTPServer:
    poll_interval = 0.02

    def handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    def __enter__(self):
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(self.poll_interval,), daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"
