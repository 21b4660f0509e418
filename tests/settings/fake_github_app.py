"""A fake of GitHub's App endpoints that the first run uses: the manifest conversion
(`POST /app-manifests/{code}/conversions`, no authentication, each code once) and `GET /app`
(the App itself, for a JWT signed with the App's private key). A real HTTP server on 127.0.0.1."""
from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler

import jwt

from tests.fakes.local_http import LocalHTTPServer
from tests.spine.helpers import app_key

CONVERSION = re.compile(r"^/app-manifests/([A-Za-z0-9_-]+)/conversions$")


class FakeGitHubApp(LocalHTTPServer):
    def __init__(self, app_id: int = 777, slug: str = "octo-agent"):
        self.private_key, self.public_key = app_key()
        self.app_id, self.slug = app_id, slug
        self.codes: set[str] = set()
        self.conversions: list[str] = []  # codes converted, in order
        self.app_checks = 0

    def handler(self):
        return _handler_for(self)

    def issue_code(self, code: str = "manifest-code-1") -> str:
        """The code GitHub appends to the redirect after the person clicks "Create GitHub App"."""
        self.codes.add(code)
        return code

    def app(self) -> dict:
        return {"id": self.app_id, "slug": self.slug, "name": "Octo Agent", "node_id": "A_fake",
                "owner": {"login": "octocat", "type": "User"}, "html_url": f"{self.url}/apps/{self.slug}",
                "client_id": "Iv23.fakeclientid", "client_secret": "fake-client-secret-0123456789abcdef",
                "webhook_secret": "fake-webhook-secret-0123456789", "pem": self.private_key}

    def convert(self, code: str) -> tuple[int, dict]:
        if code not in self.codes:
            return 404, {"message": "Not Found"}
        self.codes.discard(code)  # a code converts once
        self.conversions.append(code)
        return 201, self.app()

    def get_app(self, authorization: str) -> tuple[int, dict]:
        self.app_checks += 1
        scheme, _, token = authorization.partition(" ")
        try:
            claims = jwt.decode(token, self.public_key, algorithms=["RS256"])
        except jwt.PyJWTError as exc:
            return 401, {"message": f"A JSON web token could not be decoded ({exc})"}
        if scheme.lower() != "bearer" or str(claims.get("iss")) != str(self.app_id):
            return 401, {"message": "Integration not found"}
        app = self.app()
        return 200, {k: app[k] for k in ("id", "slug", "name", "owner", "html_url")}


def _handler_for(fake: FakeGitHubApp):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path == "/app":
                return self._reply(*fake.get_app(self.headers.get("Authorization", "")))
            return self._reply(404, {"message": "Not Found"})

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            match = CONVERSION.match(self.path)
            if match:
                return self._reply(*fake.convert(match.group(1)))
            return self._reply(404, {"message": "Not Found"})

        def _reply(self, status: int, body: dict) -> None:
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
