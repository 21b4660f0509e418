"""Each page shows, per agent, the credential a run would use and where it comes from, and per
stored key its last use, runs and spend."""
from __future__ import annotations

import re

from bot.credentials import resolve as credentials
from bot.credentials import usage
from bot.credentials import vault as secrets
from bot.db import connect
from bot.relay.budgets import Ledger, Scope
from tests.entry_settings import current, handed
from tests.settings.conftest import sign_in

KEY = "sk-ant-api03-" + "I1n2S3t4A5l6L7a8T9i0" * 4 + "-OnInstAA"
REPO_KEY = "sk-ant-api03-" + "R1e2P3o4R5e6P7o8R9e0" * 4 + "-RepoKeyA"


def row(page: str, agent: str) -> str:
    """The text of the agent's row in the effective-credential table, tags removed."""
    match = re.search(rf"<tr><th scope=row>{agent}</th>(.*?)</tr>", page)
    assert match, page
    return re.sub(r"<[^>]+>", " ", match.group(1)).replace("&#x27;", "'")


def test_repository_page_shows_the_installations_key_serving_it(client, github):
    """The issue's octo/website: no repository key, but the installation's key serves it."""
    github.add_repo("octo/website", installation_id=42, octocat="admin")
    credentials.connect(current(), "installation:42", credentials.find_kind("claude:api_key"), KEY, actor="owner")
    sign_in(client, github)
    page = client.get("/settings/repos/octo/website").text
    assert "the installation's (octo) Anthropic API key" in row(page, "claude")
    assert secrets.fingerprint(KEY) in row(page, "claude")


def test_repository_key_wins_over_the_installations(client, github):
    github.add_repo("octo/website", installation_id=42, octocat="admin")
    credentials.connect(current(), "installation:42", credentials.find_kind("claude:api_key"), KEY, actor="owner")
    credentials.connect(current(), f"repo:{github.repo_ids['octo/website']}", credentials.find_kind("claude:api_key"), REPO_KEY, actor="octocat")
    sign_in(client, github)
    assert "this repository's Anthropic API key" in row(client.get("/settings/repos/octo/website").text, "claude")


def test_operator_key_is_named_by_its_variable_never_its_value(client, github, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-operator-secret-value-0123456789")
    handed(client.app)  # the service started with the operator's key
    sign_in(client, github)
    page = client.get("/settings").text
    assert "the operator's OPENAI_API_KEY" in row(page, "codex")
    assert "sk-operator-secret" not in page


def test_personal_key_is_yours(client, github):
    sign_in(client, github)
    credentials.connect(current(), f"user:{github.users['octocat']}", credentials.find_kind("claude:api_key"), KEY,
                        actor="octocat")
    assert "your Anthropic API key" in row(client.get("/settings").text, "claude")


def test_agent_without_any_credential_is_not_usable(client, github):
    sign_in(client, github)
    text = row(client.get("/settings").text, "gemini")
    assert "nothing: no credential is connected" in text
    assert "no : connect a credential below" in text


def test_agent_whose_cli_is_missing_is_not_usable(client, github, monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSy" + "B" * 33)
    monkeypatch.setenv("BOT_GEMINI_BIN", "/nonexistent/gemini")
    handed(client.app)  # the settings of a service started with these variables
    sign_in(client, github)
    assert "the gemini CLI is not installed on this bot" in row(client.get("/settings").text, "gemini")


def test_stored_key_shows_its_last_use_runs_and_spend(client, github):
    """Runs recorded on the key (credential_use) and their relay spend (model_spend) are summed;
    a run on another key of the same scope does not count."""
    github.add_repo("octo/app", installation_id=1, octocat="admin")
    kind = credentials.find_kind("claude:api_key")
    credentials.connect(current(), f"repo:{github.repo_ids['octo/app']}", kind, REPO_KEY, actor="octocat")
    db = connect(settings=current())
    origin = credentials.resolve_origin(current(), "claude", github.repo_ids["octo/app"], None, None)
    for run_id, usd in (("run-a", 0.25), ("run-b", 0.5)):
        usage.note(db, run_id, origin)
        Ledger(db).add(run_id, Scope(conversation="octo/app#1"), 1000, usd)
    Ledger(db).add("run-other", Scope(conversation="octo/app#2"), 5, 9.0)
    db.close()
    sign_in(client, github)
    page = client.get("/settings/repos/octo/app").text
    assert '<td data-label="Runs">2</td><td data-label="Spend">$0.7500 · 2000 tokens</td>' in page
    assert re.search(r'data-label="Last used">\d{4}-\d\d-\d\d \d\d:\d\d UTC<', page)


def test_rotated_key_starts_counting_again(client, github):
    """Use is per key value: after a rotation the new key has no runs yet."""
    github.add_repo("octo/app", installation_id=1, octocat="admin")
    kind = credentials.find_kind("claude:api_key")
    credentials.connect(current(), f"repo:{github.repo_ids['octo/app']}", kind, REPO_KEY, actor="octocat")
    db = connect(settings=current())
    usage.note(db, "run-a", credentials.resolve_origin(current(), "claude", github.repo_ids["octo/app"], None, None))
    db.close()
    credentials.connect(current(), f"repo:{github.repo_ids['octo/app']}", kind, KEY, actor="octocat")
    sign_in(client, github)
    page = client.get("/settings/repos/octo/app").text
    assert '<td data-label="Last used">never</td><td data-label="Runs">0</td>' in page
