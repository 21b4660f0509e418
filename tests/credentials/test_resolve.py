"""Credential resolution order and shapes, against the real secret store."""
from __future__ import annotations

import json

import pytest

from bot.config import Settings
from bot.credentials import resolve as credentials
from bot.credentials import vault as secrets
from bot.credentials.resolve import find_kind
from tests.entry_settings import current

ANTHROPIC = "sk-ant-api03-requesterrequesterrequester"
REPO_KEY = "sk-ant-api03-repositoryrepositoryrepos"
ORG_KEY = "sk-ant-api03-installationinstallation"


@pytest.fixture(autouse=True)
def empty_home(tmp_path, monkeypatch):
    """The operator's own ~/.codex must not leak into these tests."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CODEX_HOME", raising=False)


def _connect(scope: str, name: str, value: str) -> None:
    credentials.connect(current(), scope, find_kind(name), value, actor="octocat")


def test_requester_key_wins_over_everything():
    """A user's own key is used even when the repo, the org and the operator have one."""
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    _connect("repo:1296269", "claude:api_key", REPO_KEY)
    _connect("installation:42", "claude:api_key", ORG_KEY)
    found = credentials.resolve(current(), "claude", 1296269, 583231, 42)
    assert found.env == {"ANTHROPIC_API_KEY": ANTHROPIC}
    assert found.source == "requester"


def test_repository_key_is_next(monkeypatch):
    """Without a personal key the repository's key is used before the installation's."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-operator")
    _connect("repo:1296269", "claude:api_key", REPO_KEY)
    _connect("installation:42", "claude:api_key", ORG_KEY)
    found = credentials.resolve(current(), "claude", 1296269, 4242, 42)
    assert (found.source, found.env["ANTHROPIC_API_KEY"]) == ("repository", REPO_KEY)


def test_installation_key_before_operator(monkeypatch):
    """The installation's key beats the operator's environment."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-operator")
    _connect("installation:42", "claude:api_key", ORG_KEY)
    found = credentials.resolve(current(), "claude", 1296269, 4242, "42")
    assert (found.source, found.env["ANTHROPIC_API_KEY"]) == ("installation", ORG_KEY)


def test_operator_environment_is_the_fallback(monkeypatch):
    """With nothing stored the operator's ANTHROPIC_API_KEY is used."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-operator")
    found = credentials.resolve(current(), "claude", 1296269, 4242, None)
    assert (found.source, found.env) == ("operator", {"ANTHROPIC_API_KEY": "sk-operator"})


def test_operator_claude_oauth_token(monkeypatch):
    """A subscription token in CLAUDE_CODE_OAUTH_TOKEN serves claude when there is no API key."""
    monkeypatch.setenv("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-operator")
    found = credentials.resolve(current(), "claude", None, None, None)
    assert found.env == {"CLAUDE_CODE_OAUTH_TOKEN": "sk-ant-oat01-operator"}


def test_nothing_found_is_none():
    """No stored key and no operator variable: resolve gives None."""
    assert credentials.resolve(current(), "gemini", 1296269, 583231, 42) is None


def test_other_agents_key_does_not_count():
    """A stored claude key is not offered to gemini."""
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    assert credentials.resolve(current(), "gemini", 1296269, 583231, None) is None


def test_other_users_key_is_not_used():
    """One user's key never serves another requester."""
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    assert credentials.resolve(current(), "claude", 1296269, 666, None) is None


def test_subscription_preferred_over_api_key_in_one_scope():
    """When a user stored both, the subscription token is used."""
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    _connect("user:583231", "claude:oauth_token", "sk-ant-oat01-subscriptionsubscription")
    found = credentials.resolve(current(), "claude", None, 583231, None)
    assert list(found.env) == ["CLAUDE_CODE_OAUTH_TOKEN"]


def test_codex_auth_json_becomes_a_home_file():
    """A stored Codex auth.json is delivered as .codex/auth.json in the episode HOME, not env."""
    auth = json.dumps({"auth_mode": "chatgpt", "tokens": {"access_token": "eyJ.abc.def"}})
    _connect("user:583231", "codex:auth_json", auth)
    found = credentials.resolve(current(), "codex", None, 583231, None)
    assert found.env == {}
    assert json.loads(found.files[".codex/auth.json"]) == json.loads(auth)


def test_codex_api_key_sets_both_variables():
    """An OpenAI key for codex is exported as OPENAI_API_KEY and CODEX_API_KEY."""
    _connect("repo:1296269", "codex:api_key", "sk-proj-abcdefabcdefabcdef")
    found = credentials.resolve(current(), "codex", 1296269, None, None)
    assert found.env == {"OPENAI_API_KEY": "sk-proj-abcdefabcdefabcdef",
                         "CODEX_API_KEY": "sk-proj-abcdefabcdefabcdef"}


def test_operator_codex_auth_file(tmp_path, monkeypatch):
    """The operator's own codex login (CODEX_HOME/auth.json) is the codex fallback."""
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "auth.json").write_text('{"auth_mode":"apikey","OPENAI_API_KEY":"sk-x"}')
    monkeypatch.setenv("CODEX_HOME", str(home))
    found = credentials.resolve(current(), "codex", None, None, None)
    assert found.files == {".codex/auth.json": b'{"auth_mode":"apikey","OPENAI_API_KEY":"sk-x"}'}


def test_opencode_operator_key_follows_configured_provider(monkeypatch):
    """OpenCode configured for an openai/ model takes the operator's OPENAI_API_KEY."""
    monkeypatch.setenv("BOT_OPENCODE_MODEL", "openai/gpt-5.1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert credentials.resolve(current(), "opencode", None, None, None).env == {"OPENAI_API_KEY": "sk-openai"}


def test_opencode_gateway_takes_the_openai_variable(monkeypatch):
    """Behind the operator's gateway OpenCode speaks the OpenAI wire, keyed by OPENAI_API_KEY."""
    monkeypatch.setenv("BOT_OPENCODE_BASE_URL", "http://127.0.0.1:9/gateway")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gateway")
    assert credentials.resolve(current(), "opencode", None, None, None).env == {"OPENAI_API_KEY": "sk-gateway"}


def test_opencode_custom_provider_key_variable(monkeypatch):
    """BOT_OPENCODE_KEY_ENV names the variable of a custom (gateway) provider."""
    monkeypatch.setenv("BOT_OPENCODE_KEY_ENV", "MOCK_API_KEY")
    monkeypatch.setenv("MOCK_API_KEY", "dummy")
    assert credentials.resolve(current(), "opencode", None, None, None).env == {"MOCK_API_KEY": "dummy"}


def test_json_kind_rejects_non_json():
    """Pasting a bare key where auth.json is expected is refused without echoing the value."""
    with pytest.raises(credentials.InvalidCredential) as caught:
        credentials.normalise(find_kind("codex:auth_json"), "sk-proj-secretsecret")
    assert "sk-proj" not in str(caught.value)


def test_key_with_inner_whitespace_is_refused():
    """A key pasted with a line break in the middle is refused."""
    with pytest.raises(credentials.InvalidCredential):
        credentials.normalise(find_kind("gemini:api_key"), "AIza abc\ndef")


def test_disconnect_removes_the_credential():
    """After disconnecting, resolution falls through to the next source."""
    _connect("user:583231", "gemini:api_key", "AIzaSyExampleExampleExample")
    credentials.disconnect(current(), "user:583231", find_kind("gemini:api_key"), actor="octocat")
    assert credentials.resolve(current(), "gemini", None, 583231, None) is None
    assert secrets.listing("user:583231", settings=current()) == []


def test_auth_required_names_the_settings_page(monkeypatch):
    """With a public URL and the GitHub login the auth_required sentence links the settings page."""
    monkeypatch.setenv("BOT_PUBLIC_URL", "https://bot.example.org/")
    monkeypatch.setenv("GITHUB_CLIENT_ID", "Iv1.client")
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", "client-secret")
    text = credentials.auth_required_message(current(), "codex", "octo/app")
    assert "at https://bot.example.org/settings," in text
    assert "https://bot.example.org/settings/repos/octo/app" in text
    assert "OpenAI API key" in text


def test_auth_required_without_service_names_the_variables():
    """Without a settings page (Action, terminal) the sentence names the variables to set."""
    text = credentials.auth_required_message(current(), "gemini")
    assert "`GEMINI_API_KEY`" in text


def test_operator_agents_lists_only_those_with_a_key(monkeypatch):
    """The settings page can say which agents run on the operator's key, without showing it."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-operator")
    assert credentials.operator_agents(current()) == ["gemini"]


def test_personal_key_follows_the_user_id_not_the_login():
    """A key connected by user 583231 is not used for another account that took over the login."""
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    assert credentials.resolve(current(), "claude", None, 583231, None).source == "requester"
    assert credentials.resolve(current(), "claude", None, 999999, None) is None


def test_a_repository_key_is_bound_to_the_repository_id_not_its_name():
    """A repository deleted and created again under the same name (a new id), or another one renamed
    into the name, gets nothing of the old repository's keys; a rename keeps the id and its keys."""
    _connect("repo:1296269", "claude:api_key", REPO_KEY)
    assert credentials.resolve(current(), "claude", 1296270, None, None) is None
    assert credentials.resolve(current(), "claude", 1296269, None, None).env == {"ANTHROPIC_API_KEY": REPO_KEY}


def test_a_repository_scope_cannot_be_named_by_the_repository_name():
    with pytest.raises(secrets.SecretError, match="GitHub id"):
        secrets.scope_for("repo", "octo/app")


def test_the_operators_key_is_the_one_of_the_settings_it_is_handed(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-from-the-environment")
    handed = Settings({"ANTHROPIC_API_KEY": "sk-ant-api03-handed"})
    assert credentials.resolve(handed, "claude", None, None, None).env == {"ANTHROPIC_API_KEY": "sk-ant-api03-handed"}


def test_a_stored_key_is_read_from_the_data_dir_of_the_settings_it_is_handed(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "handed"))
    _connect("user:583231", "claude:api_key", ANTHROPIC)
    handed = current()
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert credentials.resolve(handed, "claude", None, 583231, None).env == {"ANTHROPIC_API_KEY": ANTHROPIC}


def test_the_settings_page_named_is_the_one_of_the_settings_it_is_handed():
    handed = Settings({"BOT_PUBLIC_URL": "https://handed.example", "GITHUB_CLIENT_ID": "Iv1.client",
                       "GITHUB_CLIENT_SECRET": "client-secret"})
    assert "at https://handed.example/settings." in credentials.auth_required_message(handed, "gemini")


def test_a_jobs_key_lookup_reads_through_the_jobs_connection_and_opens_none(monkeypatch):
    from bot.db import connect

    _connect("repo:7", "claude:api_key", REPO_KEY)
    job_db = connect(settings=current())
    opened: list[object] = []
    monkeypatch.setattr(secrets, "connect", lambda **kwargs: opened.append(kwargs) or connect(**kwargs))
    origin = credentials.resolve_origin(current(), "claude", 7, 42, None, db=job_db)
    assert origin is not None and origin.credentials.secret_values() == [REPO_KEY] and opened == []


def test_a_key_lookup_without_a_connection_opens_its_own(monkeypatch):
    from bot.db import connect

    _connect("repo:7", "claude:api_key", REPO_KEY)
    opened: list[object] = []
    monkeypatch.setattr(secrets, "connect", lambda **kwargs: opened.append(kwargs) or connect(**kwargs))
    assert credentials.resolve_origin(current(), "claude", 7, None, None) is not None and opened
