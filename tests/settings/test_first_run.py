"""First run: `/` offers to create the GitHub App from a manifest, to whoever has the setup code of the
service's log; GitHub's conversion answer is stored encrypted and used from then on, whole (an App in
the environment replaces it whole, an App set there in part is refused); `/` says "Ready" only once
GitHub accepted the App id and key, and counts jobs as /healthz does."""
from __future__ import annotations

import html
import json
import os
import re
import stat
import time
from urllib.parse import parse_qs, urlparse

import pytest
from starlette.testclient import TestClient

from bot import config
from bot.service import store
from bot.settings import app_check, manifest
from bot.web.app import create_app
from tests.entry_settings import current, handed
from tests.settings.fake_github_app import FakeGitHubApp
from tests.spine.helpers import payload, signed

PUBLIC = "https://bot.example.org"
LOCAL = "http://localhost"  # a loopback name, as the operator's browser on this machine sends it


@pytest.fixture
def fake(monkeypatch):
    with FakeGitHubApp() as github:
        monkeypatch.setenv("GITHUB_API_URL", github.url)
        monkeypatch.setenv("BOT_GITHUB_OAUTH_URL", "https://github.example")
        monkeypatch.setattr(app_check, "_cache", {})
        yield github


@pytest.fixture
def site(fake):
    with TestClient(create_app(start_workers=False), base_url=LOCAL, follow_redirects=False) as client:
        yield client


def code_of(site: TestClient) -> str:
    """The setup code this start printed in its log."""
    return site.app.state.setup_code


def form_to_github(page: str) -> tuple[str, dict]:
    """The action of the form that goes to GitHub, and the manifest it carries."""
    action = html.unescape(re.search(r'<form method="post" action="([^"]+)">', page).group(1))
    value = re.search(r'name="manifest" value="([^"]*)"', page).group(1)
    return action, json.loads(html.unescape(value))


def setup_page(site, **query):
    return site.get("/setup/github-app", params={"setup_code": code_of(site), **query})


def create(site, fake, **query) -> dict:
    """The whole flow: our setup page, GitHub (the person clicks Create), GitHub's redirect back."""
    page = setup_page(site, owner="personal", name="my-bot", **query).text
    action, _ = form_to_github(page)
    state = parse_qs(urlparse(action).query)["state"][0]
    return site.get(manifest.CALLBACK_PATH, params={"code": fake.issue_code(), "state": state})


def test_fresh_start_offers_to_create_the_github_app(site):
    page = site.get("/").text
    assert "Not configured yet" in page
    assert "<button type=\"submit\">Create the GitHub App</button>" in page
    assert 'action="/setup/github-app"' in page
    assert "<code>http://localhost/webhook</code>" in page


def test_manifest_fills_in_permissions_events_and_urls(site, monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC)
    handed(site.app)  # as the service is started again with it
    page = site.get("/setup/github-app", params={"owner": "organization", "org": "octo-org", "name": "my-bot",
                                                 "setup_code": code_of(site)}, headers={"Host": "bot.example.org"}).text
    action, sent = form_to_github(page)
    assert action.startswith("https://github.example/organizations/octo-org/settings/apps/new?state=")
    assert sent["name"] == "my-bot"
    assert sent["hook_attributes"] == {"url": f"{PUBLIC}/webhook", "active": True}
    assert sent["redirect_url"] == f"{PUBLIC}/setup/github-app/callback"
    assert sent["callback_urls"] == [f"{PUBLIC}/settings/callback"]
    assert sent["default_permissions"]["issues"] == "write" and sent["default_permissions"]["contents"] == "write"
    assert {"issue_comment", "pull_request_review_comment"} <= set(sent["default_events"])
    assert sent["public"] is False


def test_personal_account_app_goes_to_the_users_new_app_page(site):
    action, _ = form_to_github(setup_page(site, owner="personal").text)
    assert action.startswith("https://github.example/settings/apps/new?state=")


def test_organisation_name_is_checked(site):
    response = setup_page(site, owner="organization", org="octo/../x")
    assert response.status_code == 400


def test_conversion_is_stored_encrypted_and_used(site, fake):
    """GitHub's id, key, secrets and client credentials are sealed in the data dir and configure the bot."""
    response = create(site, fake)
    assert response.status_code == 200, response.text
    assert "The GitHub App Octo Agent is created" in response.text
    assert fake.conversions == ["manifest-code-1"]
    sealed = current().data_dir / manifest.FILE
    assert stat.S_IMODE(os.stat(sealed).st_mode) == 0o600
    raw = sealed.read_bytes()
    for value in (fake.private_key.splitlines()[1], "fake-webhook-secret", "fake-client-secret"):
        assert value.encode() not in raw
    used = site.app.state.settings
    assert (used.app_id(), used.private_key(), used.webhook_secret()) == (
        "777", fake.private_key, "fake-webhook-secret-0123456789")
    assert (used.text("GITHUB_CLIENT_ID"), used.handle) == ("Iv23.fakeclientid", "octo-agent")


def test_webhooks_are_accepted_right_after_creation(site, fake):
    """No restart: the webhook secret from GitHub verifies the next delivery."""
    create(site, fake)
    body, headers = signed(payload("issue_comment.created", "@octo-agent hi"), "issue_comment",
                           secret="fake-webhook-secret-0123456789")
    assert site.post("/webhook", content=body, headers=headers).status_code != 503


def test_start_page_is_ready_after_creation(site, fake):
    create(site, fake)
    page = site.get("/").text
    assert "<strong>Ready</strong>" in page
    assert "<code>@octo-agent</code>" in page


def test_a_whole_app_in_the_environment_replaces_the_stored_one_entirely(site, fake, monkeypatch, tmp_path):
    create(site, fake)
    monkeypatch.setenv("GITHUB_APP_ID", "4242")
    key = tmp_path / "operator.pem"
    key.write_text("operator key")
    monkeypatch.setenv("GITHUB_PRIVATE_KEY_PATH", str(key))
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "operator secret")
    restarted = manifest.load_settings(os.environ)
    assert (restarted.app_id(), restarted.private_key(), restarted.webhook_secret()) == ("4242", "operator key",
                                                                                     "operator secret")
    assert restarted.text("GITHUB_CLIENT_ID") is None and restarted.handle == "bot"


def test_a_stored_app_is_never_mixed_with_a_webhook_secret_from_the_environment(site, fake, monkeypatch):
    create(site, fake)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "someone else's secret")
    with pytest.raises(config.PartialIdentity, match="GITHUB_APP_ID"):
        manifest.load_settings(os.environ).webhook_secret()


def test_stored_key_is_never_paired_with_another_apps_id(site, fake, monkeypatch):
    create(site, fake)
    monkeypatch.setenv("GITHUB_APP_ID", "4242")
    with pytest.raises(config.MissingConfig):
        manifest.load_settings(os.environ).private_key()


def test_answer_from_another_browser_is_not_converted(site, fake):
    """A code arriving with a state this browser did not start is refused before any conversion."""
    setup_page(site, owner="personal")
    response = site.get(manifest.CALLBACK_PATH, params={"code": fake.issue_code(), "state": "forged"})
    assert response.status_code == 400
    assert fake.conversions == []
    assert not (current().data_dir / manifest.FILE).exists()


def test_expired_code_says_start_again(site, fake):
    page = setup_page(site, owner="personal").text
    state = parse_qs(urlparse(form_to_github(page)[0]).query)["state"][0]
    response = site.get(manifest.CALLBACK_PATH, params={"code": "expired", "state": state})
    assert response.status_code == 502
    assert "valid for one hour and only once" in response.text


def test_the_setup_code_still_works_after_github_refused_the_answer(site, fake):
    """Nothing was created, so the operator starts again with the same code."""
    page = setup_page(site, owner="personal").text
    state = parse_qs(urlparse(form_to_github(page)[0]).query)["state"][0]
    site.get(manifest.CALLBACK_PATH, params={"code": "expired", "state": state})
    assert create(site, fake).status_code == 200


def test_a_setup_started_before_a_restart_does_not_finish_after_it(site, fake):
    """The state carries the code of the start it was made under; a new start has another code."""
    page = setup_page(site, owner="personal").text
    state = parse_qs(urlparse(form_to_github(page)[0]).query)["state"][0]
    with TestClient(create_app(start_workers=False), base_url=LOCAL, follow_redirects=False) as restarted:
        restarted.cookies.update(site.cookies)
        response = restarted.get(manifest.CALLBACK_PATH, params={"code": fake.issue_code(), "state": state})
    assert response.status_code == 403
    assert fake.conversions == []


def test_a_stored_app_is_never_overwritten(fake):
    manifest.store(fake.app(), current())
    sealed = (current().data_dir / manifest.FILE).read_bytes()
    with pytest.raises(manifest.AlreadyStored):
        manifest.store({**fake.app(), "id": 666, "webhook_secret": "an outsider's secret"}, current())
    assert (current().data_dir / manifest.FILE).read_bytes() == sealed


def test_part_of_an_app_in_the_environment_refuses_to_start_instead_of_opening_setup(fake, monkeypatch):
    monkeypatch.setenv("GITHUB_APP_ID", str(fake.app_id))
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", fake.private_key)
    with pytest.raises(config.PartialIdentity, match="GITHUB_WEBHOOK_SECRET"):
        with TestClient(create_app(start_workers=False), base_url=LOCAL):
            pass


def test_setup_is_refused_once_an_app_is_configured(site, fake):
    create(site, fake)
    assert site.get("/setup/github-app").status_code == 409


# ---- `/` when configured by environment

@pytest.fixture
def configured(fake, monkeypatch):
    monkeypatch.setenv("GITHUB_APP_ID", str(fake.app_id))
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", fake.private_key)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "s3cret")
    return fake


def test_ready_only_when_github_accepts_the_app(configured, monkeypatch):
    monkeypatch.setenv("GITHUB_APP_ID", "1")  # another App's id for this key
    with TestClient(create_app(start_workers=False), base_url=LOCAL) as client:
        page = client.get("/").text
    assert "<strong>Ready</strong>" not in page
    assert "GitHub refused App id 1 with this private key (HTTP 401)" in page


def test_ready_is_verified_once_then_cached(configured):
    with TestClient(create_app(start_workers=False), base_url=LOCAL) as client:
        first, second = client.get("/").text, client.get("/").text
    assert "<strong>Ready</strong>" in first and "<strong>Ready</strong>" in second
    assert configured.app_checks == 1


def test_unreachable_github_is_not_ready(configured, monkeypatch):
    monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")
    with TestClient(create_app(start_workers=False), base_url=LOCAL) as client:
        page = client.get("/").text
    assert "GitHub could not be reached to verify the App" in page


def test_start_page_shows_the_full_webhook_url(configured, monkeypatch):
    monkeypatch.setenv("BOT_PUBLIC_URL", PUBLIC + "/")
    with TestClient(create_app(start_workers=False), base_url=PUBLIC) as client:
        assert f"<code>{PUBLIC}/webhook</code>" in client.get("/").text


def test_job_counts_agree_with_healthz(configured):
    """A running row whose lease ran out (its process died) is not running: / and /healthz agree."""
    with TestClient(create_app(start_workers=False), base_url=LOCAL) as client:
        db = store.connect(settings=current())
        now = time.time()
        for status, lease in (("queued", None), ("done", None), ("running", now - 60)):
            db.execute("INSERT INTO jobs (kind, conversation, spec, status, created_at, lease_expires) "
                       "VALUES ('episode', 'o/r#1', '{}', ?, ?, ?)", [status, now, lease])
        db.close()
        page, health = client.get("/").text, client.get("/healthz").json()
    running = re.search(r"<th scope=row>running</th><td data-label=\"Jobs\">(\d+)</td>", page).group(1)
    assert int(running) == health["running_jobs"] == 0
    assert '<th scope=row>queued</th><td data-label="Jobs">2</td>' in page


def test_start_page_allows_no_script_and_no_framing(site):
    headers = site.get("/").headers
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


def test_looking_for_a_stored_app_creates_no_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "absent"))
    assert manifest.load_settings(os.environ).text("GITHUB_APP_ID") is None
    assert not (tmp_path / "absent").exists()
