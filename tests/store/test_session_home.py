"""The session follows the thread: a CLI home packed after a turn, restored on another machine."""
from __future__ import annotations

import base64
import os
import shutil

import pytest

from bot.config import Settings
from bot.credentials import vault
from bot.episode import session_home
from bot.service import store
from tests.entry_settings import current

ROLLOUT = ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-abc.jsonl"


def _home(key: str = "o/r#1"):
    home = session_home.home_dir(current().data_dir, key, "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    (home / ROLLOUT).write_text('{"type":"session_meta"}\n')
    (home / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY":"sk-leak"}')
    (home / ".cache").mkdir()
    (home / ".cache" / "big.bin").write_bytes(b"x" * 1000)
    return home


def _machine(monkeypatch, tmp_path, name: str) -> None:
    """Another machine: its own data dir, the same database."""
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / name))


def test_pack_keeps_the_session_and_leaves_credentials_and_caches(tmp_path):
    home = _home()
    target = tmp_path / "restored"
    target.mkdir()
    session_home.unpack(session_home.pack(home, "codex"), target, "codex")
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [ROLLOUT]


def test_pack_leaves_a_credential_file_even_when_the_resume_globs_match_it(tmp_path, monkeypatch):
    from adapters import base
    from adapters.codex import Codex

    class Greedy(Codex):  # a resume glob wide enough to take the login file with it
        resume_state = (".codex/*",)

    monkeypatch.setitem(base._REGISTRY, "codex", Greedy)
    home = _home()
    (home / ".codex" / "history.jsonl").write_text("{}\n")
    target = tmp_path / "restored"
    target.mkdir()
    session_home.unpack(session_home.pack(home, "codex"), target, "codex")
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [".codex/history.jsonl"]


def test_pack_never_follows_a_link_named_like_a_session(tmp_path):
    home = _home()
    outside = tmp_path / "outside.jsonl"
    outside.write_text("host secret")
    os.symlink(outside, home / ROLLOUT.replace("abc", "evil"))
    assert b"host secret" not in _unpacked_bytes(session_home.pack(home, "codex"), tmp_path)


def _unpacked_bytes(data: bytes, tmp_path) -> bytes:
    target = tmp_path / "check"
    target.mkdir()
    session_home.unpack(data, target, "codex")
    return b"".join(p.read_bytes() for p in target.rglob("*") if p.is_file())


def test_second_turn_on_another_machine_finds_the_first_turns_session(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    _home()
    assert session_home.save(store.connect(settings=current()), current(), "o/r#1", "codex", "machine-a") == 1
    _machine(monkeypatch, tmp_path, "machine-b")
    assert session_home.restore(store.connect(settings=current()), current(), "o/r#1", "codex") is True
    restored = session_home.home_dir(current().data_dir, "o/r#1", "codex") / ROLLOUT
    assert restored.read_text() == '{"type":"session_meta"}\n'


def test_restore_is_skipped_when_the_local_home_is_the_latest(backend):
    _home()
    session_home.save(store.connect(settings=current()), current(), "o/r#1", "codex")
    assert session_home.restore(store.connect(settings=current()), current(), "o/r#1", "codex") is False


def test_each_save_is_a_new_version(backend):
    _home()
    db = store.connect(settings=current())
    assert [session_home.save(db, current(), "o/r#1", "codex") for _ in range(3)] == [1, 2, 3]


def test_restore_replaces_what_an_agent_planted_in_the_stale_home(pg_url, monkeypatch, tmp_path):
    _machine(monkeypatch, tmp_path, "machine-a")
    _home()
    session_home.save(store.connect(settings=current()), current(), "o/r#1", "codex")
    _machine(monkeypatch, tmp_path, "machine-b")
    stale = session_home.home_dir(current().data_dir, "o/r#1", "codex")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, stale / ".codex")  # an earlier agent's trap on machine b
    session_home.restore(store.connect(settings=current()), current(), "o/r#1", "codex")
    assert list(elsewhere.iterdir()) == [] and (stale / ROLLOUT).is_file() and not (stale / ".codex").is_symlink()


def test_home_over_the_cap_is_refused_with_the_limit_named(backend):
    home = _home()
    (home / ROLLOUT).write_bytes(os.urandom(4096))
    with pytest.raises(session_home.SessionHomeTooLarge, match="BOT_SESSION_MAX_BYTES"):
        session_home.pack(home, "codex", limit=1024)


def test_a_home_stored_for_one_thread_does_not_open_for_another(backend):
    _home()
    db = store.connect(settings=current())
    session_home.save(db, current(), "o/r#1", "codex")
    db.execute("INSERT INTO session_homes (conversation, agent, version, sealed, size, updated_at) "
               "SELECT 'o/r#2', agent, version, sealed, size, updated_at FROM session_homes")
    with pytest.raises(vault.SecretError):
        session_home.restore(db, current(), "o/r#2", "codex")


async def _a_turn_writing_the_home():
    _home()
    return "answer"


async def _note(text: str) -> None:
    raise AssertionError(text)


async def test_a_turn_on_a_shared_database_stores_the_home_after_it(pg_url):
    db = store.connect(settings=current())
    assert await session_home.following(db, current(), "o/r#1", "codex", _note, _a_turn_writing_the_home) == "answer"
    assert db.query("SELECT conversation, agent, version FROM session_homes") == [
        {"conversation": "o/r#1", "agent": "codex", "version": 1}]


async def test_one_machine_keeps_its_homes_on_disk_only():
    db = store.connect(settings=current())
    await session_home.following(db, current(), "o/r#1", "codex", _note, _a_turn_writing_the_home)
    assert db.query("SELECT * FROM session_homes") == []


async def test_a_stored_home_that_does_not_open_leaves_the_turn_to_start_without_it(pg_url, monkeypatch, tmp_path):
    db = store.connect(settings=current())
    _machine(monkeypatch, tmp_path, "machine-a")
    _home()
    session_home.save(db, current(), "o/r#1", "codex")
    _machine(monkeypatch, tmp_path, "machine-b")
    monkeypatch.setenv("BOT_SECRET_KEY", base64.b64encode(b"z" * 32).decode())  # the key was rotated
    notes: list[str] = []

    async def note(text: str) -> None:
        notes.append(text)

    assert await session_home.following(db, current(), "o/r#1", "codex", note, _a_turn_writing_the_home) == "answer"
    assert notes == ["stored session could not be opened with this service's key; starting without it"]


def test_a_local_home_removed_since_its_last_turn_is_restored(backend):
    home = _home()
    db = store.connect(settings=current())
    session_home.save(db, current(), "o/r#1", "codex")
    shutil.rmtree(home)  # retention, or an operator, cleared this machine's homes
    assert session_home.restore(db, current(), "o/r#1", "codex") is True and (home / ROLLOUT).is_file()


# -- the data dir and the cap are handed down, never read ---------------------------------------

def _settings_in(data_dir) -> Settings:
    return Settings({"BOT_DATA_DIR": str(data_dir)})


def _home_in(data_dir):
    home = session_home.home_dir(data_dir, "o/r#1", "codex")
    (home / ROLLOUT).parent.mkdir(parents=True)
    (home / ROLLOUT).write_text('{"type":"session_meta"}\n')
    return home


def test_a_saved_home_is_marked_as_this_machines_version_in_the_data_dir_it_is_handed(tmp_path):
    handed = tmp_path / "handed"
    _home_in(handed)
    assert session_home.save(store.connect(settings=current()), _settings_in(handed), "o/r#1", "codex") == 1
    assert session_home.local_version(handed, "o/r#1", "codex") == 1
    assert not (tmp_path / "data" / "session-versions").exists()


def test_a_home_within_the_cap_it_is_handed_is_stored_whatever_the_environment_says(tmp_path, monkeypatch):
    monkeypatch.setenv("BOT_SESSION_MAX_BYTES", "1")
    _home_in(tmp_path / "handed")
    assert session_home.save(store.connect(settings=current()), _settings_in(tmp_path / "handed"), "o/r#1", "codex", limit=1 << 20) == 1


def test_a_threads_local_copies_are_dropped_from_the_data_dir_it_is_handed(tmp_path):
    handed = tmp_path / "handed"
    home = _home_in(handed)
    session_home.save(store.connect(settings=current()), _settings_in(handed), "o/r#1", "codex")
    assert session_home.used_here_at(handed, "o/r#1") is not None
    session_home.drop_local(handed, "o/r#1")
    assert session_home.used_here_at(handed, "o/r#1") is None and not home.exists()


async def test_a_followed_turn_stores_the_home_it_finds_in_the_data_dir_it_is_handed(pg_url, tmp_path):
    db, handed = store.connect(settings=current()), tmp_path / "handed"

    async def turn() -> str:
        _home_in(handed)
        return "answer"

    assert await session_home.following(db, _settings_in(handed), "o/r#1", "codex", _note, turn,
                                         limit=1 << 20) == "answer"
    assert session_home.local_version(handed, "o/r#1", "codex") == 1
