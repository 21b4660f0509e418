"""A fake of GitHub's OAuth web flow and the user-token REST calls the settings pages make.

A real HTTP server on 127.0.0.1 (random port, in a thread). `authorize` approves at once as the
user chosen with `sign_in_as` and redirects back with a code, like GitHub after the user clicks
"Authorize". Every call is recorded in `calls` (method, path, form or query).

List endpoints paginate as GitHub's do: `per_page` (default 30, at most 100) and `page`, with a
`Link` header naming the next and last pages while there are more.
"""
from __future__ import annotations

import itertools
import json
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlencode, urlparse

from tests.fakes.local_http import LocalHTTPServer

ROLE_PERMISSION = {"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read"}
ROLE_ORDER = ("read", "triage", "write", "maintain", "admin")
DEFAULT_PER_PAGE, MAX_PER_PAGE = 30, 100


class FakeGitHubOAuth(LocalHTTPServer):
    def __init__(self, client_id: str = "Iv1.fakeclientid", client_secret: str = "fake-client-secret"):
        self.client_id, self.client_secret = client_id, client_secret
        self.calls: list[tuple[str, str, dict]] = []
        self.users: dict[str, int] = {}
        self.roles: dict[tuple[str, str], str] = {}  # (repo, login) -> role
        self.repo_ids: dict[str, int] = {}  # repo -> its id (GitHub's, which a rename keeps)
        self.installations: dict[int, list[str]] = {}  # id -> repos
        self.accounts: dict[int, dict] = {}  # id -> {"login", "type"}
        self.org_roles: dict[tuple[str, str], str] = {}  # (org, login) -> admin | member
        self.tokens: dict[str, str] = {}  # token -> login
        self._codes: dict[str, tuple[str, str]] = {}  # code -> (login, redirect_uri)
        self._approving: str | None = None
        self.failures: dict[str, int] = {}  # API path -> status GitHub answers it with
        self._ids = itertools.count(1)

    def handler(self):
        return _handler_for(self)

    def sign_in_as(self, login: str) -> None:
        self.users.setdefault(login, 1000 + len(self.users))
        self._approving = login

    def add_repo(self, full_name: str, installation_id: int = 1, **roles: str) -> None:
        self.repo_ids.setdefault(full_name, 100_000 + len(self.repo_ids))
        self.installations.setdefault(installation_id, []).append(full_name)
        self.accounts.setdefault(installation_id, {"login": full_name.split("/")[0], "type": "Organization"})
        for login, role in roles.items():
            self.roles[(full_name, login)] = role

    def add_installation(self, installation_id: int, account: str, kind: str = "Organization",
                         **org_roles: str) -> None:
        """An installation on `account`; org_roles: login=admin|member."""
        self.installations.setdefault(installation_id, [])
        self.accounts[installation_id] = {"login": account, "type": kind}
        for login, role in org_roles.items():
            self.org_roles[(account, login)] = role

    def revoke_all_tokens(self) -> None:
        self.tokens.clear()

    # ---- routes
    def authorize(self, query: dict) -> tuple[int, object, dict]:
        if query.get("client_id") != self.client_id or not self._approving:
            return 404, {"error": "unknown client"}, {}
        code = f"code{next(self._ids)}"
        self._codes[code] = (self._approving, query["redirect_uri"])
        target = f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query.get('state', '')})}"
        return 302, None, {"Location": target}

    def access_token(self, form: dict) -> tuple[int, object, dict]:
        if (form.get("client_id"), form.get("client_secret")) != (self.client_id, self.client_secret):
            return 200, {"error": "incorrect_client_credentials"}, {}
        login, redirect_uri = self._codes.pop(form.get("code", ""), (None, None))
        if login is None or redirect_uri != form.get("redirect_uri"):
            return 200, {"error": "bad_verification_code"}, {}
        token = f"ghu_fake{next(self._ids):036d}"
        self.tokens[token] = login
        return 200, {"access_token": token, "token_type": "bearer", "scope": "", "expires_in": 28800,
                     "refresh_token": f"ghr_fake{next(self._ids)}", "refresh_token_expires_in": 15811200}, {}

    def api(self, path: str, login: str, query: dict | None = None) -> tuple[int, object, dict]:
        if path in self.failures:
            return self.failures[path], {"message": "Server Error"}, {}
        parts, query = path.strip("/").split("/"), query or {}
        if parts == ["user"]:
            return 200, {"login": login, "id": self.users[login], "type": "User"}, {}
        if parts == ["user", "installations"]:
            visible = [{"id": i, "account": self.accounts[i]} for i in self.installations if self._can_see(i, login)]
            return self._page(path, query, "installations", visible)
        if len(parts) == 4 and parts[:3] == ["user", "memberships", "orgs"]:
            role = self.org_roles.get((parts[3], login))
            if role is None:
                return 404, {"message": "Not Found"}, {}
            return 200, {"state": "active", "role": role, "organization": {"login": parts[3]}}, {}
        if len(parts) == 4 and parts[:2] == ["user", "installations"] and parts[3] == "repositories":
            repos = [self._repo(r, login) for r in self.installations.get(int(parts[2]), [])
                     if (r, login) in self.roles]
            return self._page(path, query, "repositories", repos)
        if len(parts) == 3 and parts[0] == "repos" and f"{parts[1]}/{parts[2]}" in self.repo_ids:
            full_name = f"{parts[1]}/{parts[2]}"
            if (full_name, login) not in self.roles:
                return 404, {"message": "Not Found"}, {}
            return 200, dict(self._repo(full_name, login), private=True), {}
        if len(parts) == 6 and parts[0] == "repos" and parts[3] == "collaborators" and parts[5] == "permission":
            role = self.roles.get((f"{parts[1]}/{parts[2]}", parts[4]))
            if role is None:
                return 404, {"message": "Not Found"}, {}
            return 200, {"permission": ROLE_PERMISSION[role], "role_name": role, "user": {"login": parts[4]}}, {}
        return 404, {"message": "Not Found"}, {}

    def _page(self, path: str, query: dict, key: str, items: list) -> tuple[int, object, dict]:
        per_page = min(int(query.get("per_page", DEFAULT_PER_PAGE)), MAX_PER_PAGE)
        page, last = int(query.get("page", 1)), max(1, -(-len(items) // per_page))
        body = {"total_count": len(items), key: items[(page - 1) * per_page:page * per_page]}
        if page >= last:
            return 200, body, {}
        link = ", ".join(f'<{self.url}{path}?{urlencode(dict(query, per_page=per_page, page=n))}>; rel="{rel}"'
                         for n, rel in ((page + 1, "next"), (last, "last")))
        return 200, body, {"Link": link}

    def _can_see(self, installation_id: int, login: str) -> bool:
        account = self.accounts[installation_id]
        return (account["login"] == login or (account["login"], login) in self.org_roles
                or any((r, login) in self.roles for r in self.installations[installation_id]))

    def _repo(self, full_name: str, login: str) -> dict:
        rank = ROLE_ORDER.index(self.roles[(full_name, login)])
        permissions = {"pull": True, "triage": rank >= 1, "push": rank >= 2, "maintain": rank >= 3,
                       "admin": rank >= 4}
        return {"id": self.repo_ids.get(full_name, 0), "full_name": full_name, "permissions": permissions}


def _handler_for(fake: FakeGitHubOAuth):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            url = urlparse(self.path)
            query = {k: v[0] for k, v in parse_qs(url.query).items()}
            fake.calls.append(("GET", url.path, query))
            if url.path == "/login/oauth/authorize":
                return self._reply(*fake.authorize(query))
            token = self.headers.get("Authorization", "").split(" ")[-1]
            if token not in fake.tokens:
                return self._reply(401, {"message": "Bad credentials"}, {})
            return self._reply(*fake.api(url.path, fake.tokens[token], query))

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            form = {k: v[0] for k, v in parse_qs(body).items()}
            fake.calls.append(("POST", self.path, form))
            if self.path == "/login/oauth/access_token":
                return self._reply(*fake.access_token(form))
            return self._reply(404, {"message": "Not Found"}, {})

        def _reply(self, status: int, body: object, headers: dict) -> None:
            payload = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
