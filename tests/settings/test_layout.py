"""Every page keeps the site's layout: links to GitHub and back, errors in the same frame with the
signed-in header and what was typed, GitHub unreachable told apart from GitHub refusing, help text
rendered."""
from __future__ import annotations

from tests.entry_settings import handed
from tests.settings.conftest import csrf_of, sign_in

KEY = "sk-ant-api03-" + "L1a2Y3o4U5t6L7a8Y9o0" * 4 + "-LayoutAA"
CLOSED = "http://127.0.0.1:9"


def title(page: str) -> str:
    return page[page.index("<h1>") + 4:page.index("</h1>")]


def test_repository_page_links_to_github_and_back(client, github):
    github.add_repo("octo/app", octocat="admin")
    sign_in(client, github)
    page = client.get("/settings/repos/octo/app").text
    assert f'href="{github.url}/octo/app"' in page
    assert 'href="/settings">← All settings</a>' in page
    assert '<a href="/">github-agent-bot</a>' in page


def test_installation_page_links_to_the_account_on_github(client, github):
    github.add_installation(42, "octo-org", octocat="admin")
    sign_in(client, github)
    assert f'href="{github.url}/octo-org"' in client.get("/settings/installations/42").text


def test_github_unreachable_is_not_called_a_refusal(client, github, monkeypatch):
    """GitHub down: the title says unreachable, the signed-in header stays."""
    github.add_repo("octo/app", octocat="admin")
    sign_in(client, github)
    monkeypatch.setenv("GITHUB_API_URL", CLOSED)
    handed(client.app)  # as the service is started again with it
    response = client.get("/settings/repos/octo/app")
    assert response.status_code == 502
    assert title(response.text) == "GitHub unreachable"
    assert "Signed in as <strong>octocat</strong>" in response.text


def test_github_refusing_is_called_a_refusal(client, github):
    github.add_repo("octo/app", octocat="admin")
    sign_in(client, github)
    github.failures["/repos/octo/app/collaborators/octocat/permission"] = 500
    response = client.get("/settings/repos/octo/app")
    assert title(response.text) == "GitHub refused"
    assert "Signed in as <strong>octocat</strong>" in response.text


def test_post_while_github_is_unreachable_keeps_what_was_typed(client, github, monkeypatch):
    """The key typed into a repository's form is in the form again on the error page."""
    github.add_repo("octo/app", octocat="admin")
    sign_in(client, github)
    csrf = csrf_of(client, "/settings/repos/octo/app")
    monkeypatch.setenv("GITHUB_API_URL", CLOSED)
    handed(client.app)  # as the service is started again with it
    response = client.post("/settings/repos/octo/app/keys",
                           data={"csrf": csrf, "kind": "claude:api_key", "value": KEY})
    assert title(response.text) == "GitHub unreachable"
    assert f'value="{KEY}"' in response.text
    assert 'action="/settings/repos/octo/app/keys"' in response.text
    assert '<option value="claude:api_key" selected>' in response.text


def test_stale_form_error_keeps_the_signed_in_header(client, github):
    sign_in(client, github)
    response = client.post("/settings/keys", data={"csrf": "stale", "kind": "claude:api_key", "value": KEY})
    assert response.status_code == 403
    assert "Signed in as <strong>octocat</strong>" in response.text
    assert '<a href="/">github-agent-bot</a>' in response.text


def test_help_text_renders_code_and_links(client, github):
    """No literal backticks; commands are code, provider consoles are links."""
    sign_in(client, github)
    page = client.get("/settings").text
    assert "`" not in page
    assert "<code>claude setup-token</code>" in page
    assert '<a href="https://console.anthropic.com" rel="noreferrer">console.anthropic.com</a>' in page
    assert '<a href="https://aistudio.google.com" rel="noreferrer">aistudio.google.com</a>' in page
