"""End to end: the credential the repository page says the next run uses is the one that run uses.

A maintainer connects a repository key on the page (in this process, on the service's data dir);
`bot serve` (a subprocess) then runs the real Codex CLI for a mention in that repository, through the
model relay, against the fake provider, which sees the key. The operator's key is set too, and an
installation key, so the page has to pick the right one of three."""
from __future__ import annotations

import re

import pytest

from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, say
from tests.settings.conftest import csrf_of, sign_in
from tests.spine.helpers import payload
from tests.spine.service import REPO, make_remote, seeded_github, service_env, serving
from tests.spine.test_service_e2e import answers, comment

pytestmark = pytest.mark.e2e
REPO_KEY = "sk-proj-RepositoryKeyForHelloWorld0123456789abcdef"
INSTALLATION_KEY = "sk-proj-InstallationKeyForCodertocat0123456789abc"
PAGE = f"/settings/repos/{REPO}"


def effective_row(page: str, agent: str) -> str:
    match = re.search(rf"<tr><th scope=row>{agent}</th>(.*?)</tr>", page)
    assert match, page
    return re.sub(r"<[^>]+>", " ", match.group(1)).replace("&#x27;", "'")


@pytest.fixture
def world(tmp_path, monkeypatch):
    gh = seeded_github()
    remotes = make_remote(tmp_path)
    with FakeProvider() as provider:
        env = service_env(tmp_path, gh, remotes, provider.url)
        monkeypatch.setenv("BOT_DATA_DIR", env["BOT_DATA_DIR"])  # the page and the service share the store
        monkeypatch.setenv("BOT_CODEX_BASE_URL", provider.url)
        monkeypatch.setenv("OPENAI_API_KEY", env["OPENAI_API_KEY"])
        with serving(gh, env, tmp_path / "serve.log") as service:
            yield gh, provider, service


def test_repository_page_names_the_key_the_next_run_uses(world, client, github):
    gh, provider, service = world
    github.repo_ids[REPO] = payload("issue_comment.created", "")["repository"]["id"]  # the payload's repository
    github.add_repo(REPO, installation_id=1, Codertocat="maintain")  # the payload's installation
    credentials.connect(current(), "installation:1", credentials.find_kind("codex:api_key"), INSTALLATION_KEY, actor="owner")
    sign_in(client, github, "Codertocat")
    saved = client.post(f"{PAGE}/keys", data={"csrf": csrf_of(client, PAGE), "kind": "codex:api_key",
                                              "value": REPO_KEY})
    assert saved.status_code == 303, saved.text
    shown = effective_row(client.get(PAGE).text, "codex")
    assert "this repository's OpenAI API key" in shown

    provider.script(say("The repository greets the world."))
    service.deliver(comment(gh, "@bot codex explain this repository", 1))
    gh.wait_for(lambda: answers(gh), timeout=180)

    used = {r.headers.get("authorization") for r in provider.main_requests()}
    assert used == {f"Bearer {REPO_KEY}"}
    assert secrets.fingerprint(REPO_KEY) in shown
    after = client.get(PAGE).text
    assert re.search(r'data-label="Fingerprint"><code>[^<]*</code></td><td data-label="Updated">[^<]*</td>'
                     r'<td data-label="Last used">\d{4}-[^<]*</td><td data-label="Runs">1</td>', after)
