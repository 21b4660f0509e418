"""What the Action's cache (written by any workflow run, a fork's included) or the session map brings
back is checked before it is used: a session id outside its CLI's grammar never reaches the CLI's
argv (the turn starts fresh, with the thread as its recap), and restored spend rows never lift a cap."""
from __future__ import annotations

import json
import logging
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters import base
from adapters.base import Result, Usage
from bot.cli import action_session
from bot.cli import main as cli
from bot.episode import runner as job_runner
from bot.job import conversations
from bot.relay.budgets import Budget, Caps, Ledger, Scope
from bot.service import store
from tests.action.conftest import REPO, Runner, payload
from tests.action.test_session_cache_e2e import run_step
from tests.entry_settings import current
from tests.fakes.provider import FakeProvider
from tests.spine.service import make_remote

AGENTS = tuple(base.names())
KEY = f"{REPO}#1"
REQUESTER = "21031067"  # the recorded payload's comment author (Codertocat)
PLANTED = ("--config=mcp_servers.pwn.command=\"/bin/sh\"", "-cnotify=[\"/bin/sh\"]", "latest")
VALID = {"claude": "ab6bb313-2e8a-46dc-a533-79b1b94eca64", "codex": "01a226c8-5628-7ce3-97ad-7c0a5240b239",
         "opencode": "ses_dd937982affeqagaWBh1l4x2I3", "gemini": "55d8d4ca-d607-4357-a5fa-55503ea98a39"}
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-test-0123456789", "OPENAI_API_KEY": "sk-test-0123456789abcdef",
        "GEMINI_API_KEY": "gemini-test-0123456789"}


def _cache(folder: Path, sessions: list[dict] = (), spend: list[dict] = ()) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / action_session.SESSIONS_FILE).write_text(
        json.dumps({"conversation": KEY, "sessions": list(sessions), "spend": list(spend)}))
    return folder


def _session(agent: str, session_id: object) -> dict:
    return {"agent": agent, "session_id": session_id, "created_at": 1.0, "last_used_at": 1.0, "turns": 1}


def _row(**fields: object) -> dict:
    row = {"run_id": "run-1", "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
           "requester": REQUESTER, "installation": None, "tokens": 100, "usd": 0.01}
    return row | fields


@pytest.fixture
def argvs(monkeypatch, tmp_path, github, runner):
    """Runs `@bot <agent>` in-process through the whole pipeline; the CLI is not started: its
    Invocation's argv is kept and an answer returned."""
    seen: list[list[str]] = []

    async def fake_run(adapter, episode, spawner, sandbox_config, **kwargs):
        seen.append(adapter.command(episode).argv)
        return Result(ok=True, text="answer", session_id=None, usage=Usage(), events=[], agent=adapter.name)

    monkeypatch.setattr(job_runner, "run_episode", fake_run)
    monkeypatch.setenv("BOT_GIT_BASE_URL", f"file://{make_remote(tmp_path)}")
    monkeypatch.setenv("BOT_SANDBOX_TIER", "0")
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    github.set_permission(REPO, "Codertocat", "admin")
    return seen


def _carries(argv: list[str], value: str) -> bool:
    """Whether an argument of argv is the value, or a `--flag=value` carrying it."""
    return any(arg == value or arg.endswith("=" + value) for arg in argv)


def _resumes(argv: list[str]) -> bool:
    """Whether argv resumes a session (each CLI's resume flag or subcommand)."""
    return any(arg.startswith(("--resume", "--session")) or arg == "resume" for arg in argv)


def _ask(runner: Runner, github, agent: str) -> None:
    comment = github.add_comment(REPO, 1, f"@bot {agent} go on", user="Codertocat")
    runner.event("issue_comment", payload("issue_comment.created", f"@bot {agent} go on", id=comment["id"]))
    cli.main(["action"])  # the fake CLI lists no bridge tools, so the step reports a failed run


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("planted", PLANTED)
def test_a_cached_session_id_outside_the_grammar_never_reaches_the_argv(argvs, runner, github, monkeypatch,
                                                                         tmp_path, agent, planted):
    """A cache whose session id is an option, a picker word or a path: the turn runs fresh."""
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(_cache(tmp_path / "cache", [_session(agent, planted)])))
    _ask(runner, github, agent)
    [argv] = argvs
    assert not _carries(argv, planted) and not _resumes(argv)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_cached_session_id_in_the_grammar_is_resumed(argvs, runner, github, monkeypatch, tmp_path, agent):
    """The check takes nothing from an honest cache."""
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(_cache(tmp_path / "cache", [_session(agent, VALID[agent])])))
    _ask(runner, github, agent)
    [argv] = argvs
    assert _carries(argv, VALID[agent]) and _resumes(argv)


@pytest.mark.parametrize("agent", AGENTS)
def test_a_stored_session_id_outside_the_grammar_starts_fresh_with_a_log_line(argvs, runner, github, agent, caplog):
    """A session map row that is not an id of that CLI (whoever wrote it) is not resumed: the turn
    runs fresh, says so in the log, and does not crash."""
    conversations.record_turn(store.connect(settings=current()), KEY, agent, "--config=x", fresh=True)
    with caplog.at_level(logging.WARNING):
        _ask(runner, github, agent)
    [argv] = argvs
    assert not _carries(argv, "--config=x") and not _resumes(argv)
    assert any("not a" in r.getMessage() and "starting fresh" in r.getMessage() for r in caplog.records)


def _thread_cap_reached(db, usd: float) -> bool:
    budget = Budget(operator=Caps(thread_usd=usd, requester_day_usd=usd),
                    prior=Ledger(db).spent(Scope(conversation=KEY, requester=REQUESTER)))
    budget.charge(10, usd)  # this run's own calls reach the cap by themselves
    return budget.exceeded() is not None


@pytest.mark.parametrize("field, value", [("usd", -1e9), ("usd", math.nan), ("usd", math.inf), ("usd", -math.inf),
                                          ("tokens", -10**9), ("tokens", 10**30), ("usd", 1e12)])
def test_a_restored_spend_row_out_of_range_does_not_lift_a_cap(tmp_path, field, value):
    """Negative, non-finite or absurd amounts in the cache are not taken: this run's own spend
    still reaches the cap."""
    folder = _cache(tmp_path / "cache", spend=[_row(**{field: value})])
    db = store.connect(settings=current())
    action_session.restore(db, KEY, folder, current().data_dir, requester=REQUESTER)
    assert _thread_cap_reached(db, 0.5)
    assert Ledger(db).spent(Scope(conversation=KEY))["thread"].tokens == 0


def test_a_restored_spend_row_from_the_future_is_not_taken(tmp_path):
    """A row dated after now would count in every later window: it is not taken."""
    future = (datetime.now(UTC) + timedelta(days=400)).isoformat(timespec="milliseconds")
    folder = _cache(tmp_path / "cache", spend=[_row(ts=future), _row(ts="9999"), _row(ts="not a time")])
    db = store.connect(settings=current())
    action_session.restore(db, KEY, folder, current().data_dir, requester=REQUESTER)
    assert Ledger(db).spent(Scope(conversation=KEY))["thread"].tokens == 0


def test_a_restored_spend_row_naming_an_installation_is_ignored(tmp_path):
    """An Action run has no installation: a row that names one was not written by this thread's runs."""
    folder = _cache(tmp_path / "cache", spend=[_row(installation="9999")])
    db = store.connect(settings=current())
    action_session.restore(db, KEY, folder, current().data_dir, requester=REQUESTER)
    spent = Ledger(db).spent(Scope(conversation=KEY, installation="9999"))
    assert (spent["thread"].tokens, spent["installation_month"].tokens) == (0, 0)


def test_a_restored_spend_row_of_another_requester_does_not_count_toward_this_requesters_day(tmp_path):
    """Another requester's row counts for the thread only; this requester's day holds only their own."""
    folder = _cache(tmp_path / "cache", spend=[_row(requester="42", tokens=700), _row(tokens=300)])
    db = store.connect(settings=current())
    action_session.restore(db, KEY, folder, current().data_dir, requester=REQUESTER)
    spent = Ledger(db).spent(Scope(conversation=KEY, requester=REQUESTER))
    assert (spent["thread"].tokens, spent["requester_day"].tokens) == (1000, 300)
    assert Ledger(db).spent(Scope(requester="42"))["requester_day"].tokens == 0


def test_an_honest_restored_spend_row_still_counts(tmp_path):
    """A row in range, of this thread, this requester and no installation, keeps the thread's budget."""
    folder = _cache(tmp_path / "cache", spend=[_row(tokens=1200, usd=0.05)])
    db = store.connect(settings=current())
    action_session.restore(db, KEY, folder, current().data_dir, requester=REQUESTER)
    spent = Ledger(db).spent(Scope(conversation=KEY, requester=REQUESTER))
    assert (spent["thread"].tokens, spent["thread"].usd, spent["requester_day"].tokens) == (1200, 0.05, 1200)


# ---- end to end: the real Codex, a workflow step in a subprocess

ROOT = Path(__file__).resolve().parents[2]
SENTINEL = ".codex/sessions/2026/12/01/rollout-PLANTED.jsonl"  # a name the cache scrub keeps
PLANTED_MCP = ('--config=mcp_servers.pwn={command="/bin/sh",args=["-c","mkdir -p $HOME/.codex/sessions/2026/12/01'
               f' && echo ran > $HOME/{SENTINEL}"]}}')


@pytest.mark.e2e
@pytest.mark.sandbox
def test_a_cached_codex_config_option_as_session_id_runs_no_program(github, runner, tmp_path):
    """The cache a fork's run could write holds a Codex `--config` adding an MCP server as the
    thread's session id: the step answers (a fresh session, the positive signal) and the
    planted program never ran, in the data dir or in the cache it saves."""
    github.set_permission(REPO, "Codertocat", "admin")
    cache = _cache(tmp_path / "bot-session", [_session("codex", PLANTED_MCP)])
    comment = github.add_comment(REPO, 1, "@bot codex go on", user="Codertocat")
    runner.event("issue_comment", payload("issue_comment.created", "@bot codex go on", id=comment["id"]))
    with FakeProvider() as provider:
        done = run_step(runner, github, provider, make_remote(tmp_path), tmp_path / "run", cache)
    assert done.returncode == 0, done.stdout + done.stderr
    [answer] = [c["body"] for c in github.comments(REPO, 1) if "MOCK_ANSWER" in c["body"]]
    assert "prior_assistant_turns=0" in answer
    assert not list(tmp_path.rglob("rollout-PLANTED.jsonl"))
