"""A sixth wire API is one record module: tests/relay/sixth/api.py declares an API the relay did not
speak (its path, key header, error body, body grammar, usage, hold, key test), an installed package
adds it under the `bot.wire_apis` entry points, and its agent (tests/relay/sixth/agent.py) is one
more module. `bot run`, `bot serve` and `bot action` then answer through the relay with the sixth agent on a
provider the test serves itself (tests/relay/sixth/provider.py), and no file outside those names the
API."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.action.conftest import REPO as ACTION_REPO
from tests.action.conftest import WORKFLOW_TOKEN, Runner
from tests.action.conftest import payload as action_payload
from tests.fakes.github import FakeGitHub
from tests.record.github_view import visible
from tests.relay.sixth import plugin
from tests.relay.sixth.provider import SPENT, SixthProvider
from tests.spine.local_cli import local_cli
from tests.spine.service import Service, make_remote, seeded_github, service_env
from tests.spine.test_service_e2e import answers, comment

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
SIXTH_KEY = "sk-ant-api03-sixth-operator-0123456789abcdef"
HOMES = ("tests/relay/sixth/", "tests/relay/test_sixth_api_e2e.py")
MARKS = re.compile(r"sixthcloud|relay[./]sixth|/sixth/v1|sixth_cli|SIXTH_BASE_URL")


def _sixth_env(tmp_path: Path, provider: SixthProvider) -> dict[str, str]:
    """The sixth API and agent installed, the operator's key, and the provider behind the relay."""
    return {**plugin.install(tmp_path / "sixth"), "BOT_SIXTH_BASE_URL": provider.url, "SIXTH_API_KEY": SIXTH_KEY}


def _model_calls(data: Path) -> list[tuple[str, str, dict]]:
    with sqlite3.connect(data / "bot.db") as db:
        rows = db.execute("select tool, outcome, raw from run_events where kind = 'model_call' order by seq")
        return [(tool, outcome, json.loads(raw)) for tool, outcome, raw in rows.fetchall()]


@pytest.fixture
def sixth_run(tmp_path):
    with local_cli(tmp_path) as cli, SixthProvider() as provider:
        cli.env.update(_sixth_env(tmp_path, provider))
        first = cli.bot("run", "say hello", "--agent", "sixth", "--repo", str(cli.repo))
        second = cli.bot("run", "and again", "--agent", "sixth", "--repo", str(cli.repo))
        yield first, second, provider, cli.data


def test_bot_run_answers_with_the_sixth_agent_through_the_sixth_api_and_resumes(sixth_run):
    first, second, _, _ = sixth_run
    assert first.returncode == 0, first.stdout + first.stderr
    assert "SIXTH_ANSWER prior_turns=0 last_user=say hello" in first.stdout
    assert "SIXTH_ANSWER prior_turns=1 last_user=and again" in second.stdout
    assert "sixth 1.0.0 · resumed session" in second.stdout


def test_the_provider_gets_the_operators_key_where_the_record_says_and_the_cli_only_the_relays_token(sixth_run):
    first, _, provider, _ = sixth_run
    assert first.returncode == 0, first.stdout + first.stderr
    asked = [r for r in provider.received if r.path == "/sixth/v1/ask"]
    assert asked and all(r.headers["x-api-key"] == SIXTH_KEY for r in asked)
    assert "authorization" not in asked[0].headers


def test_the_record_grammar_drops_a_field_the_api_does_not_declare(sixth_run):
    _, _, provider, data = sixth_run
    assert provider.received and all("telemetry" not in r.body for r in provider.received)
    assert provider.received[0].body["prompt"][0]["role"] == "user"


def test_the_call_is_recorded_with_the_tokens_and_cost_the_record_reads(sixth_run):
    _, _, _, data = sixth_run
    calls = _model_calls(data)
    assert [(tool, outcome) for tool, outcome, _ in calls] == [("sixthcloud/sixth", "ok")] * 2
    detail = calls[0][2]
    assert (detail["tokens"]["input_tokens"], detail["tokens"]["output_tokens"]) == (SPENT["in"], SPENT["out"])
    assert detail["model"] == "sixth-small" and detail["cost_usd"] == pytest.approx((7 * 1.0 + 3 * 2.0) / 1e6)


def test_the_service_answers_a_comment_with_the_sixth_agent_through_the_sixth_api(tmp_path):
    gh = seeded_github()
    with SixthProvider() as provider:
        env = service_env(tmp_path, gh, make_remote(tmp_path), provider.url, **_sixth_env(tmp_path, provider))
        service = Service(env, tmp_path / "serve.log").start()
        try:
            assert service.deliver(comment(gh, "@bot sixth say hello", 1)).status_code == 202
            gh.wait_for(lambda: len(answers(gh)) == 1, timeout=120)
        finally:
            service.stop()
            gh.stop()
    assert "SIXTH_ANSWER prior_turns=0" in visible(answers(gh)[0]["body"])
    assert [r.headers["x-api-key"] for r in provider.received] == [SIXTH_KEY]


def test_the_action_answers_a_comment_with_the_sixth_agent_through_the_sixth_api(tmp_path, monkeypatch):
    (tmp_path / "runner").mkdir()
    runner = Runner(tmp_path / "runner", monkeypatch)
    with FakeGitHub() as github, SixthProvider() as provider:
        github.tokens[WORKFLOW_TOKEN] = 0
        github.add_repo(ACTION_REPO)
        github.add_issue(ACTION_REPO, 1, title="Spelling error in the README file")
        github.set_permission(ACTION_REPO, "Codertocat", "admin")
        request = "@bot sixth say hello"
        posted = github.add_comment(ACTION_REPO, 1, request, user="Codertocat")
        runner.event("issue_comment", action_payload("issue_comment.created", request, id=posted["id"]))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "OPENAI", "ANTHROPIC"))}
        env.update(GITHUB_ACTIONS="true", GITHUB_EVENT_NAME="issue_comment", GITHUB_EVENT_PATH=os.environ[
            "GITHUB_EVENT_PATH"], GITHUB_TOKEN=WORKFLOW_TOKEN, GITHUB_API_URL=github.url,
            GITHUB_OUTPUT=str(runner.output), GITHUB_STEP_SUMMARY=str(runner.summary),
            BOT_GIT_BASE_URL=f"file://{make_remote(tmp_path)}", BOT_DATA_DIR=str(tmp_path / "data"),
            BOT_SESSION_CACHE_DIR=str(tmp_path / "session"), HOME=str(runner.root), **_sixth_env(tmp_path, provider))
        done = subprocess.run([sys.executable, "-m", "bot.cli", "action"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=240)
        bodies = [c["body"] for c in github.comments(ACTION_REPO, 1)]
    assert done.returncode == 0, done.stdout + done.stderr
    assert any("SIXTH_ANSWER prior_turns=0 last_user=" in visible(body or "") for body in bodies)


def test_an_installed_package_adds_the_sixth_api_to_the_registry(tmp_path):
    env = {"PATH": "/usr/bin:/bin", **plugin.install(tmp_path)}
    script = ("from bot.relay import apis, wire_api; from bot.settings.keytest import cheapest_call; "
              "print(*wire_api.names()); print(apis.route('POST', b'/sixth/v1/ask'), apis.KEY_HEADER['sixthcloud']); "
              "print(*cheapest_call('sixthcloud').models.values())")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    names, routed, cheapest = done.stdout.splitlines()
    assert names.split() == ["anthropic", "chat", "gemini", "responses", "sixth"]
    assert routed == "Route(wire='sixth', api='sixth', model=None, metered=True, only=None) x-api-key"
    assert cheapest == "sixth-small"  # the settings page's key test reads the record too


def test_no_file_outside_its_record_and_agent_names_the_sixth_api():
    """Docs may tell the proof; no other file of the repository names the API, its provider, path or
    modules, and no module of the bot says `sixth` at all."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    texts = {f: (ROOT / f).read_text(errors="replace") for f in files
             if not f.startswith(HOMES) and not f.endswith(".md") and (ROOT / f).is_file()}
    assert [f for f, text in texts.items() if MARKS.search(text)] == []
    assert [f for f, text in texts.items() if f.startswith(("bot/", "adapters/", "sandbox/"))
            and "sixth" in text.lower()] == []
