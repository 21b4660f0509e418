"""Login with GitHub: the OAuth web flow against a fake GitHub, sessions and sign-out."""
from __future__ import annotations

import base64
import os
import sqlite3
from urllib.parse import parse_qs, urlparse

import httpx
from starlette.applications import Starlette
from starlette.testclient import TestClient

from bot.settings import routes as settings
from bot.settings.session import unsign
from bot.web.app import create_app
from tests.entry_settings import current, handed
from tests.settings.conftest import csrf_of, sign_in
from tests.spine.helpers import configure_app


def test_unconfigured_oauth_page_says_what_to_set(monkeypatch):
    """Without client id and secret the page names the variables and the callback URL."""
    monkeypatch.delenv("GITHUB_CLIENT_ID", raising=False)
    monkeypatch.delenv("GITHUB_CLIENT_SECRET", raising=False)
    with TestClient(handed(Starlette(routes=settings.routes))) as client:
        page = client.get("/settings")
    assert page.status_code == 503
    for needed in ("GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "http://testserver/settings/callback"):
        assert needed in page.text


def test_anonymous_visitor_sees_login_button(client):
    """A visitor without a session is offered Login with GitHub."""
    page = client.get("/settings")
    assert page.status_code == 200
    assert 'href="/settings/login">Login with GitHub' in page.text


def test_login_redirects_to_github_with_state(client, github):
    """/settings/login sends the browser to GitHub's authorize URL with client id, callback and state."""
    response = client.get("/settings/login")
    target = urlparse(response.headers["location"])
    query = parse_qs(target.query)
    assert f"{target.scheme}://{target.netloc}{target.path}" == f"{github.url}/login/oauth/authorize"
    assert query["client_id"] == [github.client_id]
    assert query["redirect_uri"] == ["http://testserver/settings/callback"]
    assert len(query["state"][0]) >= 32


def test_public_url_sets_the_callback(client, monkeypatch):
    """Behind a proxy BOT_PUBLIC_URL decides the redirect_uri, not the Host header."""
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.org")
    handed(client.app)  # as the service is started again with it
    query = parse_qs(urlparse(client.get("/settings/login").headers["location"]).query)
    assert query["redirect_uri"] == ["https://bot.example.org/settings/callback"]


def test_full_flow_signs_the_user_in(client, github):
    """After authorize and callback the settings page greets the GitHub user."""
    sign_in(client, github, "octocat")
    page = client.get("/settings")
    assert "Signed in as <strong>octocat</strong>" in page.text


def test_state_mismatch_is_refused_before_exchanging_the_code(client, github):
    """A callback whose state does not match the cookie is refused and no code exchange happens."""
    github.sign_in_as("octocat")
    client.get("/settings/login")
    response = client.get("/settings/callback?code=code1&state=forged")
    assert response.status_code == 400
    assert "state mismatch" in response.text
    assert not [c for c in github.calls if c[1] == "/login/oauth/access_token"]


def test_denied_authorization_is_explained(client):
    """When the user cancels on GitHub the page says so."""
    response = client.get("/settings/callback?error=access_denied&state=x")
    assert response.status_code == 400
    assert "access_denied" in response.text


def test_bad_code_is_refused(client, github):
    """A code GitHub does not accept ends in a clear error, not a session."""
    client.get("/settings/login")
    state = client.cookies.get("bot_oauth_state")
    response = client.get(f"/settings/callback?code=nope&state={unsign(current(), state)['state']}")
    assert response.status_code == 400
    assert "bad_verification_code" in response.text


def test_user_token_is_not_stored_in_cookie_or_database(client, github):
    """The GitHub token stays server-side and encrypted: not in the cookie, not in bot.db."""
    sign_in(client, github)
    [token] = github.tokens
    assert token not in client.cookies.get("bot_session")
    db = b"".join(p.read_bytes() for p in current().data_dir.glob("bot.db*"))
    assert token.encode() not in db


def test_tampered_session_cookie_is_ignored(client, github):
    """A session cookie whose signature does not match counts as signed out."""
    sign_in(client, github)
    cookie = client.cookies.get("bot_session")
    client.cookies.clear()
    client.cookies.set("bot_session", cookie[:-2] + ("00" if cookie[-2:] != "00" else "11"), path="/settings")
    assert "Login with GitHub" in client.get("/settings").text


def test_logout_needs_the_csrf_token(client, github):
    """A cross-site POST to sign out without the form's token is refused."""
    sign_in(client, github)
    assert client.post("/settings/logout", data={}).status_code == 403
    assert "Signed in as" in client.get("/settings").text


def test_logout_ends_the_session(client, github):
    """Signing out removes the session; the old cookie no longer works."""
    sign_in(client, github)
    old = client.cookies.get("bot_session")
    assert client.post("/settings/logout", data={"csrf": csrf_of(client)}).status_code == 303
    client.cookies.clear()
    client.cookies.set("bot_session", old, path="/settings")
    assert "Login with GitHub" in client.get("/settings").text


def test_revoked_github_token_ends_the_session(client, github):
    """If GitHub stops accepting the user's token, the page asks to sign in again."""
    sign_in(client, github)
    github.revoke_all_tokens()
    response = client.get("/settings")
    assert response.status_code == 401
    assert "Sign in again" in response.text


def test_pages_send_security_headers(client):
    """Pages forbid framing and scripts through CSP and are not cached."""
    headers = client.get("/settings").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "script-src" not in headers["content-security-policy"]  # default-src 'none' covers scripts
    assert headers["cache-control"] == "no-store"


def test_signing_in_again_retires_the_previous_session(client, github):
    """A new sign-in gets a new session id; the previous cookie stops working."""
    sign_in(client, github)
    first = client.cookies.get("bot_session")
    sign_in(client, github)
    assert client.cookies.get("bot_session") != first
    client.cookies.clear()
    client.cookies.set("bot_session", first, path="/settings")
    assert "Login with GitHub" in client.get("/settings").text


def test_changed_master_key_signs_everyone_out(client, github, monkeypatch):
    """After the operator replaces the master key, old cookies read as signed out, not as errors."""
    sign_in(client, github)
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(os.urandom(32)).decode())
    handed(client.app)  # the service started again with the new key
    assert "Login with GitHub" in client.get("/settings").text


def test_unreadable_session_row_reads_as_signed_out(client, github):
    """A session whose sealed token no longer opens (altered row) is ended, not a server error."""
    sign_in(client, github)
    conn = sqlite3.connect(current().data_dir / "bot.db")
    with conn:
        conn.execute("update settings_sessions set token_sealed = zeroblob(40)")
    conn.close()
    assert "Login with GitHub" in client.get("/settings").text


def test_settings_are_mounted_in_the_service_app(github, monkeypatch):
    """`bot serve`'s app serves the settings pages next to /webhook."""
    configure_app(monkeypatch)  # the OAuth client comes with the rest of the App, never alone
    with TestClient(create_app(start_workers=False), base_url="http://localhost") as client:
        assert "Login with GitHub" in client.get("/settings").text


def test_callback_without_any_state_is_refused(client, github):
    """No state cookie and no state parameter is a forged callback (login CSRF), not a match."""
    github.sign_in_as("mallory")
    code = github.authorize({"client_id": github.client_id, "redirect_uri": "http://testserver/settings/callback"})
    attacker_code = parse_qs(urlparse(code[2]["Location"]).query)["code"][0]
    response = client.get(f"/settings/callback?code={attacker_code}")
    assert response.status_code == 400
    assert "bot_session" not in client.cookies


def test_oauth_error_text_is_not_echoed_verbatim(client):
    """Only GitHub's error codes are shown, not arbitrary text from the link."""
    response = client.get("/settings/callback?error=Call+555-0100+to+recover+your+account")
    assert "555-0100" not in response.text


def test_a_sign_in_state_is_used_once(client, github):
    """A state (and its cookie) that completed a sign-in opens no second one: replayed with a fresh
    code of another account, it would sign the victim's browser in as that account."""
    github.sign_in_as("octocat")
    to_github = client.get("/settings/login").headers["location"]
    cookie = client.cookies.get("bot_oauth_state")
    back = urlparse(httpx.get(to_github, follow_redirects=False).headers["location"])
    assert client.get(f"{back.path}?{back.query}").status_code == 303
    github.sign_in_as("mallory")
    replay = urlparse(httpx.get(to_github, follow_redirects=False).headers["location"])
    client.cookies.set("bot_oauth_state", cookie, path="/settings")
    exchanges = sum(1 for call in github.calls if call[1] == "/login/oauth/access_token")
    response = client.get(f"{replay.path}?{replay.query}")
    assert response.status_code == 400 and "already used" in response.text
    assert sum(1 for call in github.calls if call[1] == "/login/oauth/access_token") == exchanges
