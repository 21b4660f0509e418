"""Connecting, listing and deleting personal and repository credentials through the pages."""
from __future__ import annotations

import json

from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from tests.entry_settings import current, handed
from tests.settings.conftest import csrf_of, sign_in

KEY = "sk-ant-api03-PersonalPersonalPersonal9Qz"


def _add(client, value=KEY, kind="claude:api_key", path="/settings", csrf=None):
    token = csrf if csrf is not None else csrf_of(client, path)
    return client.post(f"{path}/keys", data={"csrf": token, "kind": kind, "value": value})


def test_personal_key_is_listed_by_fingerprint_only(client, github):
    """After saving, the page shows the fingerprint and never the key."""
    sign_in(client, github)
    assert _add(client).headers["location"] == "/settings?saved=claude%3Aapi_key"
    page = client.get("/settings?saved=claude:api_key").text
    assert "Saved claude: Anthropic API key." in page
    assert secrets.fingerprint(KEY) in page.replace("&amp;", "&")
    assert KEY not in page


def test_personal_key_serves_the_requester(client, github):
    """A key saved on the page is what resolve() hands to that user's episodes."""
    sign_in(client, github, "octocat")
    _add(client)
    found = credentials.resolve(current(), "claude", None, github.users["octocat"], None)
    assert (found.source, found.env) == ("requester", {"ANTHROPIC_API_KEY": KEY})


def test_save_without_csrf_token_is_refused(client, github):
    """A forged cross-site form post (no token) stores nothing."""
    sign_in(client, github)
    response = client.post("/settings/keys", data={"kind": "claude:api_key", "value": KEY})
    assert response.status_code == 403
    assert secrets.listing(f"user:{github.users['octocat']}", settings=current()) == []


def test_csrf_token_of_another_session_is_refused(client, github):
    """The token is bound to the session: one copied from another user's page does not work."""
    sign_in(client, github, "mallory")
    mallory_token = csrf_of(client)
    client.cookies.clear()
    sign_in(client, github, "octocat")
    assert _add(client, csrf=mallory_token).status_code == 403
    assert secrets.listing(f"user:{github.users['octocat']}", settings=current()) == []


def test_save_while_signed_out_asks_to_sign_in(client):
    """A post without a session is answered with the login page, not stored."""
    response = client.post("/settings/keys", data={"csrf": "x", "kind": "claude:api_key", "value": KEY})
    assert response.status_code == 401
    assert "Login with GitHub" in response.text


def test_invalid_auth_json_is_refused_with_a_reason(client, github):
    """Pasting a bare key as Codex auth.json is refused naming what it is; the message does not repeat
    the value (only the field keeps it), nothing stored."""
    sign_in(client, github)
    response = _add(client, value="sk-proj-notjsonnotjson", kind="codex:auth_json")
    assert response.status_code == 400
    assert "looks like an OpenAI API key, not the content of a file" in response.text
    assert response.text.count("sk-proj-notjson") == 1
    assert 'value="sk-proj-notjsonnotjson"' in response.text
    assert secrets.listing(f"user:{github.users['octocat']}", settings=current()) == []


def test_codex_auth_json_is_accepted(client, github):
    """A Codex auth.json pasted (newlines stripped by the password field) is stored."""
    sign_in(client, github)
    auth = json.dumps({"auth_mode": "apikey", "OPENAI_API_KEY": "sk-proj-x"})
    assert _add(client, value=auth, kind="codex:auth_json").status_code == 303
    assert secrets.get(f"user:{github.users['octocat']}", "codex:auth_json", settings=current()) == auth


def test_unknown_kind_is_refused(client, github):
    """A kind that is not in the catalogue is refused."""
    sign_in(client, github)
    assert _add(client, kind="claude:password").status_code == 400


def test_delete_personal_key(client, github):
    """The delete button removes the key and leaves an audit row by the user."""
    sign_in(client, github)
    _add(client)
    response = client.post("/settings/keys/delete", data={"csrf": csrf_of(client), "kind": "claude:api_key"})
    assert response.status_code == 303
    assert secrets.listing(f"user:{github.users['octocat']}", settings=current()) == []
    assert [(r["action"], r["actor"]) for r in secrets.audit_log(f"user:{github.users['octocat']}", settings=current())] == [
        ("set", "octocat"), ("delete", "octocat")]


def test_home_lists_only_repositories_the_user_administers(client, github):
    """Admin and maintain repositories are linked; write-only ones are not."""
    github.add_repo("octo/admin-repo", octocat="admin")
    github.add_repo("octo/maintained", octocat="maintain")
    github.add_repo("octo/writer-only", installation_id=2, octocat="write")
    sign_in(client, github)
    page = client.get("/settings").text
    assert 'href="/settings/repos/octo/admin-repo"' in page
    assert 'href="/settings/repos/octo/maintained"' in page
    assert "writer-only" not in page


def test_maintainer_connects_a_repository_key(client, github):
    """A maintainer's repository key serves another requester of that repository."""
    github.add_repo("octo/app", octocat="maintain")
    sign_in(client, github)
    assert _add(client, path="/settings/repos/octo/app").status_code == 303
    found = credentials.resolve(current(), "claude", github.repo_ids["octo/app"], 31337, None)
    assert (found.source, found.env["ANTHROPIC_API_KEY"]) == ("repository", KEY)
    assert KEY not in client.get("/settings/repos/octo/app").text


def test_writer_cannot_open_the_repository_page(client, github):
    """Write access is not enough to manage a repository's keys."""
    github.add_repo("octo/app", octocat="write")
    sign_in(client, github)
    assert client.get("/settings/repos/octo/app").status_code == 403


def test_writer_cannot_post_a_repository_key(client, github):
    """A forged post to a repository the user does not administer stores nothing."""
    github.add_repo("octo/app", octocat="write")
    sign_in(client, github)
    response = client.post("/settings/repos/octo/app/keys",
                           data={"csrf": csrf_of(client), "kind": "claude:api_key", "value": KEY})
    assert response.status_code == 403
    assert secrets.listing(f"repo:{github.repo_ids['octo/app']}", settings=current()) == []


def test_repository_key_delete(client, github):
    """An admin removes a repository key from its page."""
    github.add_repo("octo/app", octocat="admin")
    sign_in(client, github)
    _add(client, path="/settings/repos/octo/app")
    response = client.post("/settings/repos/octo/app/keys/delete",
                           data={"csrf": csrf_of(client), "kind": "claude:api_key"})
    assert response.headers["location"] == "/settings/repos/octo/app?deleted=claude%3Aapi_key"
    assert secrets.listing(f"repo:{github.repo_ids['octo/app']}", settings=current()) == []


def test_malformed_repository_path_is_not_found(client, github):
    """Names outside GitHub's character set never reach the permission check."""
    sign_in(client, github)
    assert client.get("/settings/repos/octo/%3Cscript%3E").status_code == 404


def test_org_owner_sees_the_installation(client, github):
    """An organization owner is offered the installation's page; a member is not."""
    github.add_installation(42, "octo-org", octocat="admin", hubot="member")
    sign_in(client, github, "octocat")
    assert 'href="/settings/installations/42">octo-org</a>' in client.get("/settings").text
    client.cookies.clear()
    sign_in(client, github, "hubot")
    assert "/settings/installations/42" not in client.get("/settings").text


def test_org_owner_connects_an_installation_key(client, github):
    """An installation key serves repositories of that installation with no key of their own."""
    github.add_installation(42, "octo-org", octocat="admin")
    sign_in(client, github)
    assert _add(client, path="/settings/installations/42").status_code == 303
    found = credentials.resolve(current(), "claude", None, 31337, 42)
    assert (found.source, found.env["ANTHROPIC_API_KEY"]) == ("installation", KEY)


def test_personal_account_owner_administers_own_installation(client, github):
    """An installation on a user account is administered by that user."""
    github.add_installation(7, "octocat", kind="User")
    sign_in(client, github)
    assert client.get("/settings/installations/7").status_code == 200


def test_org_member_cannot_post_an_installation_key(client, github):
    """A forged post by a plain member of the organization stores nothing."""
    github.add_installation(42, "octo-org", hubot="member")
    sign_in(client, github, "hubot")
    response = client.post("/settings/installations/42/keys",
                           data={"csrf": csrf_of(client), "kind": "claude:api_key", "value": KEY})
    assert response.status_code == 403
    assert secrets.listing("installation:42", settings=current()) == []


def test_home_says_which_agents_run_on_the_operators_key(client, github, monkeypatch, tmp_path):
    """Users learn whether they need a key at all; the operator's key itself is never shown."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-operator-secret-value")
    handed(client.app)  # the service started with the operator's key
    sign_in(client, github)
    page = client.get("/settings").text
    assert "the operator&#x27;s GEMINI_API_KEY" in page
    assert "AIza-operator-secret-value" not in page


def test_repository_page_shows_who_changed_its_keys(client, github):
    """Maintainers see the audit trail of the shared key: who set and who deleted it, no values."""
    github.add_repo("octo/app", octocat="admin", hubot="maintain")
    sign_in(client, github, "octocat")
    _add(client, path="/settings/repos/octo/app")
    client.cookies.clear()
    sign_in(client, github, "hubot")
    client.post("/settings/repos/octo/app/keys/delete", data={"csrf": csrf_of(client, "/settings/repos/octo/app"),
                                                              "kind": "claude:api_key"})
    page = client.get("/settings/repos/octo/app").text
    history = page[page.index("<h2>History</h2>"):]
    hubot_deleted = '"Who">hubot</td><td data-label="Change">delete'
    octocat_set = '"Who">octocat</td><td data-label="Change">set'
    assert history.index(hubot_deleted) < history.index(octocat_set)
    assert KEY not in page
