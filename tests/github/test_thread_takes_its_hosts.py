"""The thread context reaches GitHub at the hosts it is handed, never at the environment's."""
from __future__ import annotations

import httpx
import pytest

from bot.config import Settings
from bot.github.client import RetryingAPI, Thread
from bot.github.thread import Hosts, attachment_urls, download, fetch
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
TOKEN = "ghs_thread_token"
ELSEWHERE = "http://127.0.0.1:9"  # nothing listens: a call that read the environment fails
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


@pytest.fixture
def gh(monkeypatch):
    with FakeGitHub() as fake:
        fake.add_repo(REPO)
        fake.tokens[TOKEN] = 1
        monkeypatch.setenv("GITHUB_API_URL", ELSEWHERE)
        monkeypatch.setenv("GITHUB_SERVER_URL", ELSEWHERE)
        yield fake


def handed(fake: FakeGitHub) -> Hosts:
    return Hosts(api_url=fake.url, server_url=fake.url)


def test_attachments_are_the_ones_on_the_web_host_it_is_handed(gh):
    url = gh.add_attachment(PNG)
    assert attachment_urls([f"![screenshot]({url})"], REPO, handed(gh)) == [url]


async def test_an_attachment_is_fetched_with_the_token_from_the_hosts_it_is_handed(gh, tmp_path):
    url = gh.add_attachment(PNG)
    saved = await download([url], REPO, tmp_path / "att", TOKEN, handed(gh))
    assert saved[0].path.read_bytes() == PNG
    assert [c.headers.get("authorization") for c in gh.calls_to("GET", "^/user-attachments/")] == [f"Bearer {TOKEN}"]


async def test_an_issue_naming_a_run_on_the_web_host_it_is_handed_gets_the_failing_job_log(gh):
    run = gh.add_check_run(REPO, "d" * 40, "build", log="make: *** [all] Error 2\n##[error]failed")
    gh.add_issue(REPO, 3, body="CI broke: " + run["details_url"].split("/job/")[0].replace("https://github.com", gh.url))
    async with httpx.AsyncClient() as client:
        thread = Thread(RetryingAPI(client, oauth_token=TOKEN, base_url=gh.url), REPO, 3)
        data = await fetch(thread, is_pr=False, hosts=handed(gh))
    assert [c.name for c in data.checks] == ["build"] and "Error 2" in (data.checks[0].log_tail or "")


def test_the_hosts_of_settings_are_their_api_and_web_host():
    hosts = Hosts.of(Settings({"GITHUB_API_URL": "https://ghe.example.com/api/v3/"}))
    assert (hosts.api_url, hosts.server_url) == ("https://ghe.example.com/api/v3", "https://ghe.example.com")
