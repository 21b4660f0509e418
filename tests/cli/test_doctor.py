"""`bot doctor` and `bot run` agree on credentials, the GitHub App is checked with GitHub, and the
report ends with one verdict (`ok` in --json)."""
from __future__ import annotations

import json

import pytest

from bot.cli import doctor
from bot.settings import app_check
from tests.settings.fake_github_app import FakeGitHubApp


@pytest.fixture
def report(monkeypatch, capsys):
    monkeypatch.setattr(app_check, "_cache", {})

    def run() -> tuple[int, dict]:
        code = doctor.main(["--json"])
        return code, json.loads(capsys.readouterr().out)
    return run


def agent(data: dict, name: str) -> dict:
    return next(row for row in data["agents"] if row["agent"] == name)


def github(data: dict) -> dict:
    return next(s for s in data["sections"] if s["section"] == "github app")


def test_a_gateway_without_a_key_is_not_ready_in_doctor_as_in_run(report, monkeypatch, bot):
    monkeypatch.setenv("BOT_CLAUDE_BASE_URL", "http://127.0.0.1:9")
    _, data = report()
    refused = bot("run", "hi", "--agent", "claude", "--repo", str(bot.repo),
                  env={"BOT_CLAUDE_BASE_URL": "http://127.0.0.1:9"})
    assert agent(data, "claude")["logged_in"] is False and "ANTHROPIC_API_KEY" in agent(data, "claude")["reason"]
    assert refused.returncode == 2 and "no credentials for claude" in refused.stderr


def test_doctor_names_the_variable_a_run_would_use(report, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-doctor-test-0123456789")
    _, data = report()
    assert agent(data, "codex")["logged_in"] is True
    assert agent(data, "codex")["reason"] == "the operator's OPENAI_API_KEY"


def app_env(monkeypatch, fake: FakeGitHubApp, app_id: int) -> None:
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    monkeypatch.setenv("GITHUB_APP_ID", str(app_id))
    monkeypatch.setenv("GITHUB_PRIVATE_KEY", fake.private_key)
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "whsec-doctor-0123456789")
    monkeypatch.setenv("GITHUB_CLIENT_ID", "Iv23.doctor")
    monkeypatch.setenv("GITHUB_CLIENT_SECRET", "doctor-client-secret-0123456789")


def test_the_app_id_and_key_are_verified_with_github(report, monkeypatch):
    with FakeGitHubApp() as fake:
        app_env(monkeypatch, fake, fake.app_id)
        _, data = report()
        assert fake.app_checks == 1
    section = github(data)
    assert section["ok"] is True and "Octo Agent" in section["rows"][0]["detail"]


def test_an_app_github_refuses_makes_the_verdict_not_ok(report, monkeypatch):
    with FakeGitHubApp() as fake:
        app_env(monkeypatch, fake, fake.app_id + 1)
        code, data = report()
    assert (code, data["ok"], github(data)["ok"]) == (1, False, False)
    assert data["verdict"].startswith("NOT OK") and "github app" in data["verdict"]


def test_a_half_configured_app_is_not_ok(report, monkeypatch):
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "whsec-doctor-0123456789")
    _, data = report()
    assert github(data)["ok"] is False and data["ok"] is False


def test_no_app_at_all_is_a_finding_not_a_failure(report):
    _, data = report()
    assert github(data)["configured"] is False and github(data)["ok"] is None
    assert "not set up: github app" in data["verdict"]


def test_the_text_report_ends_with_the_verdict(capsys, monkeypatch):
    doctor.main([])
    last = capsys.readouterr().out.rstrip().splitlines()[-1]
    assert last.startswith(("OK: ", "OK, but ", "NOT OK: "))
