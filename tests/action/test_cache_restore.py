"""Restoring the Action's session cache reads an allowlist: only regular files of bounded size, each
value parsed into its declared type and range (unknown keys dropped and recorded), spend merged
add-only into the ledger, and any entry that cannot be read is discarded (so it is not restored
again) while the command is still answered in the thread."""
from __future__ import annotations

import json
import logging
import math
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import action_session
from bot.cli import main as cli
from bot.config import Settings
from bot.job import conversations
from bot.relay.budgets import Ledger, Scope
from bot.service import store
from tests.action.conftest import REPO, payload
from tests.action.test_restored_values import KEY, REQUESTER, VALID, _cache, _row, _session, argvs  # noqa: F401
from tests.entry_settings import current

SLUG = conversations.slug(KEY)
BLOCK_GUARD_S = 30  # far past any restore; only a blocked one reaches it


def restore_unblocked(folder: Path, requester: str | None = REQUESTER,
                      data_dir: Path | None = None) -> action_session.Restored:
    """Restore in a thread; a restore still blocked after the guard is released by opening its
    FIFOs for writing, and the test fails saying so."""
    done: dict = {}
    settings = current() if data_dir is None else Settings(dict(os.environ, BOT_DATA_DIR=str(data_dir)))

    def work() -> None:
        try:
            done["value"] = action_session.restore(store.connect(settings=settings), KEY, folder,
                                                   settings.data_dir, requester=requester)
        except BaseException as exc:  # re-raised in the test's thread
            done["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(BLOCK_GUARD_S)
    blocked = worker.is_alive()
    if blocked:
        for fifo in (p for p in folder.rglob("*") if p.is_fifo()):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join()
    assert not blocked, "restore blocked on a file of the cache entry"
    if "error" in done:
        raise done["error"]
    return done["value"]


def _spent(requester: str | None = None) -> tuple[int, float]:
    spend = Ledger(store.connect(settings=current())).spent(Scope(conversation=KEY, requester=requester))["thread"]
    return spend.tokens, spend.usd


def _sessions() -> list[dict]:
    return list(store.connect(settings=current()).query("SELECT * FROM sessions WHERE conversation = ?", [KEY]))


def _entry_is_gone(folder: Path) -> bool:
    return not os.path.lexists(folder) or (folder.is_dir() and not folder.is_symlink() and not any(folder.iterdir()))


# ---- odd files: the entry is discarded, nothing blocks


def test_a_sessions_file_that_is_a_fifo_discards_the_entry_without_blocking(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    os.mkfifo(folder / action_session.SESSIONS_FILE)
    restored = restore_unblocked(folder)
    assert restored.discarded and "regular file" in restored.discarded
    assert _entry_is_gone(folder)


def test_a_sessions_file_that_is_a_symlink_is_not_followed(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"conversation": KEY, "sessions": [_session("codex", VALID["codex"])],
                                   "spend": []}))
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / action_session.SESSIONS_FILE).symlink_to(outside)
    restored = restore_unblocked(folder)
    assert restored.discarded and _sessions() == [] and outside.exists()


def test_a_sessions_file_that_is_a_folder_discards_the_entry(tmp_path):
    folder = tmp_path / "cache"
    (folder / action_session.SESSIONS_FILE).mkdir(parents=True)
    assert restore_unblocked(folder).discarded


def test_an_oversized_sessions_file_discards_the_entry(tmp_path):
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"])])
    with open(folder / action_session.SESSIONS_FILE, "a") as handle:
        handle.write(" " * (action_session.cache_entry.MAX_ENTRY_BYTES + 1))
    restored = restore_unblocked(folder)
    assert restored.discarded and "bytes" in restored.discarded and _sessions() == []


def test_a_homes_folder_that_is_a_symlink_discards_the_entry(tmp_path):
    outside = tmp_path / "outside"
    (outside / SLUG / "codex" / ".codex").mkdir(parents=True)
    (outside / SLUG / "codex" / ".codex" / "keep").write_text("not the cache's")
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"])])
    (folder / "homes").symlink_to(outside)
    restored = restore_unblocked(folder)
    assert restored.discarded and "homes" in restored.discarded
    assert (outside / SLUG / "codex" / ".codex" / "keep").exists()
    assert not (current().data_dir / "homes" / SLUG).exists() and _sessions() == []


def test_a_cache_folder_that_is_a_symlink_is_not_followed(tmp_path):
    real = _cache(tmp_path / "elsewhere", [_session("codex", VALID["codex"])])
    folder = tmp_path / "cache"
    folder.symlink_to(real)
    assert restore_unblocked(folder).discarded and _sessions() == []
    assert (real / action_session.SESSIONS_FILE).exists()


def test_a_home_file_that_is_a_fifo_is_not_restored_and_nothing_blocks(tmp_path):
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"])])
    rollout = folder / "homes" / SLUG / "codex" / ".codex" / "sessions" / "2026" / "01" / "01"
    rollout.mkdir(parents=True)
    os.mkfifo(rollout / "rollout-x.jsonl")
    restore_unblocked(folder)
    assert not list((current().data_dir / "homes").rglob("rollout-x.jsonl"))


def test_homes_over_the_byte_bound_discard_the_entry(tmp_path, monkeypatch):
    monkeypatch.setattr(action_session.cache_entry, "MAX_HOME_BYTES", 1000)
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"])])
    rollout = folder / "homes" / SLUG / "codex" / ".codex" / "sessions" / "2026" / "01" / "01"
    rollout.mkdir(parents=True)
    (rollout / "rollout-big.jsonl").write_text("x" * 1001)
    restored = restore_unblocked(folder)
    assert restored.discarded and "bytes" in restored.discarded
    assert not (current().data_dir / "homes" / SLUG).exists() and _sessions() == []


def test_an_honest_home_is_restored(tmp_path):
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"])])
    rollout = folder / "homes" / SLUG / "codex" / ".codex" / "sessions" / "2026" / "01" / "01"
    rollout.mkdir(parents=True)
    (rollout / "rollout-a.jsonl").write_text("{}\n")
    restored = restore_unblocked(folder)
    assert restored.discarded is None and restored.sessions == 1
    target = current().data_dir / "homes" / SLUG / "codex" / ".codex" / "sessions" / "2026" / "01" / "01"
    assert (target / "rollout-a.jsonl").read_text() == "{}\n"


# ---- values: each parsed into its type and range


@pytest.mark.parametrize("field, value", [("turns", 2 ** 70), ("turns", -1), ("turns", 1.5), ("turns", True),
                                          ("created_at", math.nan), ("created_at", math.inf),
                                          ("created_at", -1.0), ("last_used_at", -math.inf),
                                          ("last_used_at", 1e300), ("session_id", 7), ("agent", "nobody")])
def test_a_session_value_out_of_its_type_or_range_is_dropped_and_recorded(tmp_path, caplog, field, value):
    row = _session("codex", VALID["codex"]) | {field: value}
    with caplog.at_level(logging.WARNING):
        restored = restore_unblocked(_cache(tmp_path / "cache", [row]))
    assert restored.discarded is None and restored.sessions == 0 and _sessions() == []
    assert any(field in line for line in restored.dropped)
    assert any("dropped" in r.getMessage() for r in caplog.records)


def test_a_spend_value_out_of_range_never_reaches_the_ledger(tmp_path):
    rows = [_row(usd=math.nan), _row(usd=-0.5), _row(tokens=2 ** 70), _row(tokens=-3), _row(run_id=5)]
    restored = restore_unblocked(_cache(tmp_path / "cache", spend=rows))
    assert _spent() == (0, 0.0) and len(restored.dropped) >= 5


def test_unknown_keys_are_dropped_and_recorded(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    entry = {"conversation": KEY, "sessions": [_session("codex", VALID["codex"]) | {"argv": ["--evil"]}],
             "spend": [], "extra": 1}
    (folder / action_session.SESSIONS_FILE).write_text(json.dumps(entry))
    restored = restore_unblocked(folder)
    assert restored.sessions == 1
    assert any("extra" in line for line in restored.dropped) and any("argv" in line for line in restored.dropped)


@pytest.mark.parametrize("text", ["[" * 100_000, '{"conversation": 1e999999}', '{"sessions": 1' + "0" * 5000 + "}",
                                  "\xff\xfe", "null"])
def test_an_entry_that_is_not_the_grammars_is_discarded(tmp_path, text):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / action_session.SESSIONS_FILE).write_bytes(text.encode("utf-8", "surrogateescape"))
    assert restore_unblocked(folder).discarded


def test_another_threads_entry_is_ignored_not_discarded(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    (folder / action_session.SESSIONS_FILE).write_text(json.dumps({"conversation": "other/repo#9", "sessions": []}))
    restored = restore_unblocked(folder)
    assert restored.discarded is None and restored.sessions == 0


# ---- spend: a cache only adds


def test_an_entry_without_spend_rows_keeps_the_ledgers_spend(tmp_path):
    Ledger(store.connect(settings=current())).add("run-0", Scope(conversation=KEY, requester=REQUESTER), 500, 0.2)
    restore_unblocked(_cache(tmp_path / "cache", [_session("codex", VALID["codex"])]))
    assert _spent() == (500, 0.2)


def test_restoring_the_same_entry_twice_counts_its_spend_once(tmp_path):
    """A data dir kept across runs (a self-hosted runner) already holds what the cache carries."""
    folder = _cache(tmp_path / "cache", spend=[_row(tokens=300, usd=0.03)])
    restore_unblocked(folder)
    restore_unblocked(folder)
    assert _spent() == (300, 0.03)


def test_a_cached_row_never_lowers_the_ledgers_row_of_the_same_run(tmp_path):
    row = _row(tokens=300, usd=0.03)
    db = store.connect(settings=current())
    db.execute("INSERT INTO model_spend (run_id, ts, conversation, requester, installation, tokens, usd) "
               "VALUES (?, ?, ?, ?, NULL, ?, ?)", [row["run_id"], row["ts"], KEY, REQUESTER, 900, 0.09])
    restore_unblocked(_cache(tmp_path / "cache", spend=[row]))
    tokens, usd = _spent()
    assert tokens >= 900 and usd >= 0.09


# ---- the step: discarded, and still answered


def _ask(runner, github, text: str) -> None:
    comment = github.add_comment(REPO, 1, text, user="Codertocat")
    runner.event("issue_comment", payload("issue_comment.created", text, id=comment["id"]))
    cli.main(["action"])


def _poisoned(tmp_path: Path, monkeypatch) -> Path:
    folder = _cache(tmp_path / "cache", [_session("codex", VALID["codex"]) | {"turns": 2 ** 70}])
    (folder / "homes").symlink_to(tmp_path)
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(folder))
    return folder


def test_a_run_over_a_poisoned_entry_is_answered_and_the_entry_replaced(argvs, runner, github, monkeypatch,  # noqa: F811
                                                                        tmp_path):
    folder = _poisoned(tmp_path, monkeypatch)
    _ask(runner, github, "@bot codex go on")
    assert len(argvs) == 1 and runner.outputs()["session"] == "saved"
    assert [c for c in github.comments(REPO, 1) if "answer" in c["body"]]
    assert not (folder / "homes").is_symlink()
    assert json.loads((folder / action_session.SESSIONS_FILE).read_text())["conversation"] == KEY


def test_a_status_over_a_poisoned_entry_is_answered_and_the_entry_replaced(runner, github, monkeypatch, tmp_path):
    github.set_permission(REPO, "Codertocat", "admin")
    folder = _poisoned(tmp_path, monkeypatch)
    _ask(runner, github, "@bot status")
    outputs = runner.outputs()
    assert outputs["status"] == "replied" and outputs["session"] == "saved"
    assert not (folder / "homes").is_symlink()


def test_the_step_warns_when_it_discards_an_entry(runner, github, monkeypatch, tmp_path, capsys):
    github.set_permission(REPO, "Codertocat", "admin")
    _poisoned(tmp_path, monkeypatch)
    _ask(runner, github, "@bot status")
    assert "::warning::" in capsys.readouterr().out


def test_a_restore_that_dates_spend_uses_the_ledgers_own_time_format(tmp_path):
    ts = datetime.now(UTC).isoformat(timespec="seconds")
    restore_unblocked(_cache(tmp_path / "cache", spend=[_row(ts=ts, tokens=10)]))
    [row] = store.connect(settings=current()).query("SELECT ts FROM model_spend")
    assert row["ts"].endswith("+00:00") and "." in row["ts"]


def test_the_step_warns_with_how_many_values_it_dropped(runner, github, monkeypatch, tmp_path, capsys):
    github.set_permission(REPO, "Codertocat", "admin")
    folder = _cache(tmp_path / "cache", spend=[_row(tokens=-1)] * 25)
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(folder))
    _ask(runner, github, "@bot status")
    assert "::warning::bot: 25 values of the thread's session cache" in capsys.readouterr().out
