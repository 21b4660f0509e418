"""First run through the real `bot serve`: the App's identity comes whole from one source, setup needs
the one-time code of the service's log, and every request's Host is the service's own."""
from __future__ import annotations

import html
import json
import re
from urllib.parse import parse_qs, urlparse

import httpx
import pytest

from bot.settings import manifest
from tests.entry_settings import current
from tests.settings.fake_github_app import FakeGitHubApp
from tests.settings.served import Served, first_run_env

pytestmark = pytest.mark.e2e
FOREIGN = "rebind.example"


@pytest.fixture
def github():
    with FakeGitHubApp() as fake:
        yield fake


@pytest.fixture
def serve(tmp_path):
    """Starts `bot serve` with an environment; every one started is stopped after the test."""
    started: list[Served] = []

    def start(env: dict[str, str]) -> Served:
        started.append(Served(env, tmp_path / f"serve-{len(started)}.log"))
        return started[-1]
    yield start
    for service in started:
        service.stop()


@pytest.fixture
def served(tmp_path, github, serve):
    service = serve(first_run_env(tmp_path, github.url))
    assert service.outcome() == "serving", service.log()
    return service


def manifest_form(page: str) -> tuple[str, dict]:
    action = html.unescape(re.search(r'<form method="post" action="([^"]+)">', page).group(1))
    value = re.search(r'name="manifest" value="([^"]*)"', page).group(1)
    return action, json.loads(html.unescape(value))


def start_setup(client: httpx.Client, code: str | None) -> httpx.Response:
    query = {"owner": "personal", "name": "my-bot", **({"setup_code": code} if code else {})}
    return client.get("/setup/github-app", params=query)


def finish_setup(client: httpx.Client, github: FakeGitHubApp, page: str) -> httpx.Response:
    state = parse_qs(urlparse(manifest_form(page)[0]).query)["state"][0]
    return client.get(manifest.CALLBACK_PATH, params={"code": github.issue_code(), "state": state})


def test_serve_refuses_to_start_when_the_app_is_set_in_part(tmp_path, github, serve):
    """App id and key without the webhook secret: one line naming the missing variable, no service."""
    env = first_run_env(tmp_path, github.url, GITHUB_APP_ID="777", GITHUB_PRIVATE_KEY=github.private_key)
    service = serve(env)
    assert service.outcome() == "exited 2"
    lines = service.log().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bot serve: ") and "GITHUB_WEBHOOK_SECRET" in lines[0]


def test_a_stored_app_with_part_of_an_app_in_the_environment_refuses_to_start_and_is_kept(tmp_path, github, serve):
    manifest.store(github.app(), current())
    sealed = (current().data_dir / manifest.FILE).read_bytes()
    service = serve(first_run_env(tmp_path, github.url, GITHUB_APP_ID="4242"))
    assert service.outcome() == "exited 2"
    assert "GITHUB_WEBHOOK_SECRET" in service.log() and "GITHUB_PRIVATE_KEY" in service.log()
    assert (current().data_dir / manifest.FILE).read_bytes() == sealed


def test_the_log_says_where_to_create_the_app_with_the_setup_code(served):
    address, code = served.setup_code()
    assert address == served.url and len(code) >= 22
    page = httpx.get(f"{served.url}/?code={code}").text
    assert f'name="setup_code" value="{code}"' in page


def test_setup_without_the_code_is_refused(served):
    with httpx.Client(base_url=served.url) as client:
        assert start_setup(client, None).status_code == 403
        assert start_setup(client, "not-the-code").status_code == 403


def test_setup_with_the_code_creates_the_app_once_and_never_again(served, github):
    _, code = served.setup_code()
    with httpx.Client(base_url=served.url) as client:
        page = start_setup(client, code)
        assert page.status_code == 200
        assert finish_setup(client, github, page.text).status_code == 200
        assert start_setup(client, code).status_code == 409
    assert github.conversions == ["manifest-code-1"]


def test_the_manifest_urls_never_follow_the_host_header(served):
    """localhost is an allowed name, but the App is told the address the service listens on."""
    _, code = served.setup_code()
    port = served.env["BOT_PORT"]
    with httpx.Client(base_url=served.url, headers={"Host": f"localhost:{port}"}) as client:
        sent = manifest_form(start_setup(client, code).text)[1]
    assert sent["hook_attributes"]["url"] == f"{served.url}/webhook"
    assert sent["redirect_url"] == f"{served.url}{manifest.CALLBACK_PATH}"


ROUTES = [("GET", "/"), ("GET", "/setup/github-app"), ("GET", manifest.CALLBACK_PATH), ("GET", "/settings"),
          ("GET", "/settings/login"), ("GET", "/settings/callback"), ("POST", "/settings/keys"),
          ("GET", "/runs/0123456789abcdef0123456789abcdef"), ("GET", "/metrics"), ("POST", "/webhook")]


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_foreign_host_is_refused(served, method, path):
    port = served.env["BOT_PORT"]
    for host in (f"{FOREIGN}:{port}", FOREIGN, "127.0.0.1:1", f"localhost.{FOREIGN}:{port}"):
        answer = httpx.request(method, f"{served.url}{path}", headers={"Host": host})
        assert answer.status_code == 421, (host, answer.text)
        assert FOREIGN not in answer.text


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_the_probes_answer_whatever_the_host(served, path):
    """An orchestrator probes with the pod's address as Host; the probes only read."""
    assert httpx.get(f"{served.url}{path}", headers={"Host": f"10.1.2.3:{served.env['BOT_PORT']}"}).status_code != 421
