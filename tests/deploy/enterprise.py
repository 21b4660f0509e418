"""The fake GitHub as a GitHub Enterprise Server answers: on another loopback address (127.0.0.2,
so nothing can reach it by the github.com fake's 127.0.0.1), the REST API only under `/api/v3`,
the web host's own paths (attachments, signed blobs) at the root."""
from __future__ import annotations

import threading
from http.server import ThreadingHTTPServer

from tests.fakes.github import FakeGitHub, _handler_for
from tests.spine.helpers import app_key
from tests.spine.service import REPO

HOST = "127.0.0.2"
PREFIX = "/api/v3"
WEB_PATHS = ("/user-attachments/", "/_blobs/")


class EnterpriseGitHub(FakeGitHub):
    """`url` is the web host (GITHUB_SERVER_URL), `api_url` the REST API (GITHUB_API_URL). A REST
    call outside `/api/v3` is answered 404, as an Enterprise Server does, and kept in `misses`."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.misses: list[str] = []

    def start(self) -> EnterpriseGitHub:
        self._server = ThreadingHTTPServer((HOST, 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://{HOST}:{self._server.server_address[1]}"

    @property
    def api_url(self) -> str:
        return self.url + PREFIX

    def _dispatch(self, method: str, path: str, body: object, headers: dict) -> tuple[int, object, dict]:
        if path.startswith(PREFIX + "/"):
            return super()._dispatch(method, path.removeprefix(PREFIX), body, headers)
        if path.startswith(WEB_PATHS):
            return super()._dispatch(method, path, body, headers)
        with self._lock:
            self.misses.append(f"{method} {path}")
        return 404, {"message": "Not Found", "documentation_url": "https://docs.github.com/enterprise-server"}, {}

    def _check_conformance(self, method: str, raw_path: str, *rest: object) -> None:
        """The REST description knows the API's paths without the Enterprise prefix."""
        check = getattr(super(), "_check_conformance", None)
        if check is not None:
            check(method, raw_path.removeprefix(PREFIX), *rest)


def seeded_enterprise() -> EnterpriseGitHub:
    """The recorded payloads' repository, issue and pull request, as tests/spine/service.py seeds them."""
    gh = EnterpriseGitHub(app_id="4242", public_key=app_key()[1]).start()
    gh.add_repo(REPO)
    gh.add_issue(REPO, 1, title="Spelling error in the README file", user="Codertocat")
    gh.set_permission(REPO, "Codertocat", "admin")
    return gh
