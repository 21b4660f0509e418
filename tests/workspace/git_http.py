"""A real smart-HTTP git server on 127.0.0.1 (git http-backend as CGI) that demands the token.

It stands in for https://github.com/<owner>/<repo>.git: HTTP Basic auth with user
`x-access-token` and the installation token, else 401 — so a test can prove the token
reaches git (through the environment) and that nothing else does.
"""
from __future__ import annotations

import base64
import subprocess
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from tests.fakes.local_http import LocalHTTPServer

BACKEND = "/usr/lib/git-core/git-http-backend"


class GitHttpServer(LocalHTTPServer):
    def __init__(self, root: Path, token: str):
        self.root, self.token = root, token
        self.authorized: list[str] = []  # "METHOD path" of every request that carried the token
        self.refused = 0

    def handler(self):
        return _handler_for(self)

    def accepts(self, header: str) -> bool:
        expected = base64.b64encode(f"x-access-token:{self.token}".encode()).decode()
        return header == f"Basic {expected}"


def _handler_for(server: GitHttpServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _serve(self):
            body = self._body()
            if not server.accepts(self.headers.get("authorization", "")):
                server.refused += 1
                self.send_response(401)
                self.send_header("www-authenticate", 'Basic realm="git"')
                self.send_header("content-length", "0")
                self.end_headers()
                return
            server.authorized.append(f"{self.command} {self.path}")
            status, headers, payload = _cgi(server.root, self, body)
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _body(self) -> bytes:
            if self.headers.get("transfer-encoding", "").lower() == "chunked":
                chunks = []
                while size := int(self.rfile.readline().strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        do_GET = do_POST = _serve

    return Handler


def _cgi(root: Path, request: BaseHTTPRequestHandler, body: bytes):
    path, _, query = request.path.partition("?")
    env = {"GIT_PROJECT_ROOT": str(root), "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
           "QUERY_STRING": query, "REQUEST_METHOD": request.command, "REMOTE_USER": "x-access-token",
           "REMOTE_ADDR": "127.0.0.1", "CONTENT_TYPE": request.headers.get("content-type", ""),
           "CONTENT_LENGTH": str(len(body)), "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent",
           "PATH": "/usr/bin:/bin", "HTTP_GIT_PROTOCOL": request.headers.get("git-protocol", ""),
           "HTTP_CONTENT_ENCODING": request.headers.get("content-encoding", "")}
    done = subprocess.run([BACKEND], input=body, env=env, capture_output=True)
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    status, headers = 200, []
    for line in head.decode("latin-1").split("\r\n"):
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name, value.strip()))
    return status, headers, payload
