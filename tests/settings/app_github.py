"""One GitHub address for settings-page tests whose pages also act as the App: the OAuth fake
(sign-in and the signed-in user's calls, tests/settings/fake_github_oauth.py) answers the user's
tokens, and every call of the App (minting an installation token, then calls with that token) is
passed to the REST fake behind it (tests/fakes/github.py, held to GitHub's REST description by the
autouse `github_conformance` fixture), as on GitHub both are one API.

    with AppGitHub(public_key) as github:      # GITHUB_API_URL = github.url (use_fake_github)
        github.rest.add_repo("octo/app")       # the App's view: files, branches, pull requests
"""
from __future__ import annotations

import httpx

from tests.fakes.github import FakeGitHub
from tests.settings.fake_github_oauth import FakeGitHubOAuth

APP_ID = "4242"
PASSED_HEADERS = ("content-type", "link", "location", "retry-after")


class AppGitHub(FakeGitHubOAuth):
    def __init__(self, public_key: str):
        super().__init__()
        self.rest = FakeGitHub(app_id=APP_ID, public_key=public_key)

    def __enter__(self):
        self.rest.start()
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.rest.stop()

    def handler(self):
        return _passing(super().handler(), self.rest)


def _passing(oauth_handler, rest: FakeGitHub):
    class Handler(oauth_handler):
        def do_GET(self):
            return self._pass() if self._apps() else super().do_GET()

        def do_POST(self):
            return self._pass() if self._apps() else super().do_POST()

        def do_PUT(self):
            return self._pass()

        def do_PATCH(self):
            return self._pass()

        def do_DELETE(self):
            return self._pass()

        def _apps(self) -> bool:
            token = self.headers.get("Authorization", "").split(" ")[-1]
            return self.path.startswith("/app/") or token.startswith("ghs_")

        def _pass(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            answer = httpx.request(self.command, rest.url + self.path, headers=headers, content=body)
            self.send_response(answer.status_code)
            for name, value in answer.headers.items():
                if name.lower() in PASSED_HEADERS:
                    self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.content)))
            self.end_headers()
            self.wfile.write(answer.content)

    return Handler
