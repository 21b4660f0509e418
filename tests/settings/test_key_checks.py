"""Saving a key on the pages: its shape is checked, what was typed is kept, a replacement is confirmed,
and "Test" makes one call to the (fake) provider through the run's own upstream."""
from __future__ import annotations

import logging

import pytest

from bot.credentials import vault as secrets
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider, fail
from tests.settings.conftest import csrf_of, sign_in

API_KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 4 + "-AbCdEfAA"
OTHER_KEY = "sk-ant-api03-" + "Q1w2E3r4T5y6U7i8O9p0" * 4 + "-ZzYyXxAA"


def _post(client, value, kind="claude:api_key", path="/settings", **extra):
    data = {"csrf": csrf_of(client, path), "kind": kind, "value": value, **extra}
    return client.post(f"{path}/keys", data=data)


def _tested(client, kind="claude:api_key"):
    """Test's post redirects back to the page (303), which shows the result."""
    posted = client.post("/settings/keys/test", data={"csrf": csrf_of(client), "kind": kind})
    assert posted.status_code == 303
    return client.get(posted.headers["location"])


def _scope(github, login="octocat"):
    return f"user:{github.users[login]}"


def test_api_key_under_subscription_token_is_refused_and_kept_in_the_field(client, github):
    """The issue's case: an sk-ant-api03 key saved as "Claude subscription token" is refused, the
    message names the right kind, the field still holds the key and its kind stays chosen."""
    sign_in(client, github)
    response = _post(client, API_KEY, kind="claude:oauth_token")
    assert response.status_code == 400
    assert "looks like an Anthropic API key, not a Claude subscription token" in response.text
    assert f'value="{API_KEY}"' in response.text
    assert '<option value="claude:oauth_token" selected>' in response.text
    assert secrets.listing(_scope(github), settings=current()) == []


def test_hello_does_not_replace_a_working_key(client, github):
    """"hello" is not an Anthropic key: refused, and the connected key stays."""
    sign_in(client, github)
    assert _post(client, API_KEY).status_code == 303
    response = _post(client, "hello", replace="yes")
    assert response.status_code == 400
    assert "This is not an Anthropic API key: an Anthropic API key starts with sk-ant-api03-" in response.text
    assert secrets.get(_scope(github), "claude:api_key", settings=current()) == API_KEY


def test_replacing_a_key_asks_first(client, github):
    """A second key of the same kind is not saved until the person confirms the replacement."""
    sign_in(client, github)
    _post(client, API_KEY)
    asked = _post(client, OTHER_KEY)
    assert asked.status_code == 200
    assert f"An Anthropic API key is already connected here ({secrets.fingerprint(API_KEY)})" in asked.text
    assert '<input type="hidden" name="replace" value="yes">' in asked.text
    assert f'value="{OTHER_KEY}"' in asked.text
    assert secrets.get(_scope(github), "claude:api_key", settings=current()) == API_KEY
    assert _post(client, OTHER_KEY, replace="yes").status_code == 303
    assert secrets.get(_scope(github), "claude:api_key", settings=current()) == OTHER_KEY


def test_rotate_link_chooses_the_kind_and_confirms_replacement(client, github):
    """Rotate opens the form with that kind chosen and the replacement already confirmed."""
    sign_in(client, github)
    _post(client, API_KEY)
    page = client.get("/settings?rotate=claude:api_key").text
    assert '<option value="claude:api_key" selected>' in page
    assert f"Rotate: paste the new Anthropic API key; it replaces {secrets.fingerprint(API_KEY)}" in page
    assert '<input type="hidden" name="replace" value="yes">' in page


def test_refused_value_is_never_logged(client, github, caplog):
    """Whatever happens to a pasted value, no log line carries it."""
    caplog.set_level(logging.DEBUG)
    sign_in(client, github)
    _post(client, API_KEY, kind="claude:oauth_token")
    _post(client, API_KEY)
    assert API_KEY not in caplog.text


@pytest.fixture
def provider(monkeypatch):
    """The fake provider as Claude's gateway: asked for before `client`, whose app takes the settings."""
    with FakeProvider() as fake:
        monkeypatch.setenv("BOT_CLAUDE_BASE_URL", fake.url)
        yield fake


def test_key_test_reports_an_accepted_key(provider, client, github):
    """Test makes one model call with the stored key, in the header the provider expects."""
    sign_in(client, github)
    _post(client, API_KEY)
    response = _tested(client)
    assert response.status_code == 200
    assert "claude: The provider accepted this Anthropic API key." in response.text
    assert [(r.api, r.headers.get("x-api-key")) for r in provider.requests] == [("anthropic", API_KEY)]
    assert provider.requests[0].body["max_tokens"] == 1


def test_key_test_reports_a_rejected_key(provider, client, github):
    """A 401 from the provider reads as rejected, as an alert."""
    provider.script(fail(401, "invalid x-api-key"))
    sign_in(client, github)
    _post(client, API_KEY)
    response = _tested(client)
    assert 'role="alert">claude: The provider rejected this Anthropic API key (HTTP 401).' in response.text


def test_subscription_token_is_tested_as_a_bearer(provider, client, github):
    """A Claude subscription token travels as a bearer token, as the relay sends it in a run."""
    token = "sk-ant-oat01-" + "Z9y8X7w6V5u4T3s2R1q0" * 4 + "-ZyXwVuAA"
    sign_in(client, github)
    _post(client, token, kind="claude:oauth_token")
    client.post("/settings/keys/test", data={"csrf": csrf_of(client), "kind": "claude:oauth_token"})
    assert provider.requests[0].headers.get("authorization") == f"Bearer {token}"


def test_key_test_says_when_the_provider_is_unreachable(client, github, monkeypatch):
    monkeypatch.setenv("BOT_CLAUDE_BASE_URL", "http://127.0.0.1:9")
    sign_in(client, github)
    _post(client, API_KEY)
    response = _tested(client)
    assert "could not be reached" in response.text


def test_no_kind_is_chosen_until_the_person_chooses(client, github):
    """The form starts on "Choose…", not on the first kind (Claude subscription token)."""
    sign_in(client, github)
    page = client.get("/settings").text
    assert '<option value="" disabled selected>Choose what you paste…</option>' in page
    assert "<option value=\"claude:oauth_token\" selected>" not in page
