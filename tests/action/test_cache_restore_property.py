"""Property: random cache entries (the entry's grammar, plus wrong types, huge integers, NaN,
infinities, negatives, unknown keys, and odd files: FIFO, symlink, folder, oversized) against the
restore. It never raises out of the step, never blocks, never lowers the thread's spend, and
the command is still answered in the thread."""
from __future__ import annotations

import json
import math
import os
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import action_session
from bot.cli import main as cli
from bot.config import Settings
from bot.job import conversations
from bot.relay.budgets import Ledger, Scope
from bot.service import store
from tests.action.conftest import REPO, payload
from tests.action.test_cache_restore import restore_unblocked
from tests.action.test_restored_values import KEY, REQUESTER, VALID, argvs  # noqa: F401

SLUG = conversations.slug(KEY)
ODD = [2 ** 70, -2 ** 70, -1, math.nan, math.inf, -math.inf, -0.5, 1e308, True, None, "", "x" * 300,
       [], {}, "--config=x", "latest"]
wrong = st.one_of(st.sampled_from(ODD), st.integers(), st.floats(allow_nan=True), st.text(max_size=20))
agents = st.sampled_from(sorted(VALID) + ["nobody"])


def _now(offset_days: float) -> str:
    return (datetime.now(UTC) + timedelta(days=offset_days)).isoformat(timespec="milliseconds")


sessions = st.builds(lambda agent, turns, at: {"agent": agent, "session_id": VALID.get(agent, "s"),
                                               "created_at": at, "last_used_at": at, "turns": turns},
                     agents, st.integers(0, 1000), st.floats(0, 2e9))
spend = st.builds(lambda run, tokens, usd, days, who: {"run_id": run, "ts": _now(days), "requester": who,
                                                       "installation": None, "tokens": tokens, "usd": usd},
                  st.sampled_from(["run-1", "run-2", None]), st.integers(0, 5000),
                  st.one_of(st.none(), st.floats(0, 1)), st.floats(-30, 0), st.sampled_from([REQUESTER, "42", None]))


@st.composite
def mutated(draw, rows):
    """A row of the grammar, with some fields given wrong values or removed, and unknown keys."""
    row = draw(rows)
    for name in draw(st.lists(st.sampled_from(sorted(row)), max_size=3, unique=True)):
        if draw(st.booleans()):
            row[name] = draw(wrong)
        else:
            del row[name]
    if draw(st.booleans()):
        row[draw(st.text(min_size=1, max_size=8))] = draw(wrong)
    return row


entries = st.fixed_dictionaries(
    {"conversation": st.one_of(st.just(KEY), st.just(KEY), wrong),
     "sessions": st.one_of(st.lists(st.one_of(sessions, mutated(sessions), wrong), max_size=6), wrong),
     "spend": st.one_of(st.lists(st.one_of(spend, mutated(spend), wrong), max_size=12), wrong)},
    optional={"extra": wrong})
file_kinds = st.sampled_from(["regular", "regular", "regular", "fifo", "symlink", "folder", "oversized", "absent"])
home_kinds = st.sampled_from(["absent", "files", "files", "symlink", "file", "fifo", "fifo-inside"])


def _write_entry(folder: Path, entry: dict, kind: str) -> None:
    target = folder / action_session.SESSIONS_FILE
    text = json.dumps(entry)
    if kind == "regular":
        target.write_text(text)
    elif kind == "fifo":
        os.mkfifo(target)
    elif kind == "symlink":
        (folder / "elsewhere.json").write_text(text)
        target.symlink_to(folder / "elsewhere.json")
    elif kind == "folder":
        target.mkdir()
    elif kind == "oversized":
        target.write_text(text + " " * action_session.cache_entry.MAX_ENTRY_BYTES)


def _write_homes(folder: Path, kind: str) -> None:
    homes = folder / "homes"
    rollout = homes / SLUG / "codex" / ".codex" / "sessions" / "2026" / "01" / "01"
    if kind in ("files", "fifo-inside"):
        rollout.mkdir(parents=True)
        (rollout / "rollout-a.jsonl").write_text("{}\n")
        (homes / SLUG / "codex" / ".bashrc").write_text("planted")
    if kind == "fifo-inside":
        os.mkfifo(rollout / "rollout-b.jsonl")
    elif kind == "symlink":
        homes.symlink_to(folder.parent)
    elif kind == "file":
        homes.write_text("not a folder")
    elif kind == "fifo":
        os.mkfifo(homes)


def _spent(data_dir: Path) -> tuple[int, float]:
    db = store.connect(settings=Settings(dict(os.environ, BOT_DATA_DIR=str(data_dir))))
    thread = Ledger(db).spent(Scope(conversation=KEY))["thread"]
    return thread.tokens, thread.usd


def _seed_ledger(data_dir: Path, rows: list[tuple[int, float]]) -> None:
    db = store.connect(settings=Settings(dict(os.environ, BOT_DATA_DIR=str(data_dir))))
    for tokens, usd in rows:
        Ledger(db).add("run-0", Scope(conversation=KEY, requester=REQUESTER), tokens, usd)


ledger_rows = st.lists(st.tuples(st.integers(0, 5000), st.floats(0, 1)), max_size=3)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=entries, kind=file_kinds, homes=home_kinds, ledger=ledger_rows)
def test_a_random_entry_never_raises_blocks_or_lowers_spend(entry, kind, homes, ledger):
    with tempfile.TemporaryDirectory() as root:
        folder, data_dir = Path(root) / "cache", Path(root) / "data"
        folder.mkdir()
        _write_entry(folder, entry, kind)
        _write_homes(folder, homes)
        _seed_ledger(data_dir, ledger)
        before = _spent(data_dir)
        restored = restore_unblocked(folder, data_dir=data_dir)
        after = _spent(data_dir)
        assert after[0] >= before[0] and after[1] >= before[1] - 1e-9
        if restored.discarded:
            assert folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir())
        home = data_dir / "homes" / SLUG
        assert not home.exists() or all(p.is_dir() or (p.is_file() and not p.is_symlink())
                                        for p in home.rglob("*"))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(entry=entries, kind=file_kinds, homes=home_kinds)
def test_a_run_over_a_random_entry_is_answered_and_saves_a_fresh_entry(argvs, runner, github, monkeypatch,  # noqa: F811
                                                                        entry, kind, homes):
    with tempfile.TemporaryDirectory() as root:
        folder = Path(root) / "cache"
        folder.mkdir()
        _write_entry(folder, entry, kind)
        _write_homes(folder, homes)
        monkeypatch.setenv("BOT_DATA_DIR", str(Path(root) / "data"))
        monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(folder))
        runner.output.write_text("")
        answers = len(argvs)
        comment = github.add_comment(REPO, 1, "@bot codex go on", user="Codertocat")
        runner.event("issue_comment", payload("issue_comment.created", "@bot codex go on", id=comment["id"]))
        assert cli.main(["action"]) in (0, 1)
        outputs = runner.outputs()
        assert len(argvs) == answers + 1 and outputs["session"] == "saved" and outputs["comment-id"]
        assert json.loads((folder / action_session.SESSIONS_FILE).read_text())["conversation"] == KEY
