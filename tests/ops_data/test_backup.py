"""`bot backup` / `bot restore`: a consistent copy of the database and the key, taken while jobs
run, restores into an empty data dir with every job and secret intact."""
from __future__ import annotations

import sqlite3
import tarfile
import threading

import pytest

from bot.cli import backup as backup_cli
from bot.cli import restore as restore_cli
from bot.config import Settings
from bot.credentials import vault
from bot.service import backup, queue, store, wakeup
from bot.settings import manifest
from tests.entry_settings import current

SECRETS = {("user:alice", "openai_api_key"): "sk-alice-0123456789abcdef",
           ("repo:octo/app", "anthropic_api_key"): "sk-ant-app-0123456789abcdef"}


class JobTraffic:
    """Jobs queued, claimed and finished on connections of their own while the backup runs."""

    def __init__(self):
        self.stop = threading.Event()
        self.done = 0
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(60)

    def _run(self) -> None:
        db = store.connect(settings=current())
        try:
            while not self.stop.is_set():
                n = self.done
                job_id = store.write(db, lambda conn, n=n: store.enqueue_delivery(
                    conn, delivery_id=f"d{n}", event="issue_comment", action="created", kind="run",
                    conversation=f"o/r#{n % 7}", spec={"repo": "o/r", "number": n % 7, "author": "bob",
                          "command": {"kind": "run", "request": "x" * 2000}}))
                claimed = queue.claim(db, "writer", 30)
                if claimed is not None:
                    queue.finish(db, claimed.id, "done", owner="writer")
                if n % 10 == 0:
                    vault.put("user:bob", f"k{n % 5}", f"sk-bob-{n:06d}-0123456789", actor="bob", settings=current())
                assert job_id is not None
                self.done += 1
        except BaseException as exc:  # reported by the test
            self.errors.append(exc)
        finally:
            db.close()


def _jobs(path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, delivery_id, status FROM jobs ORDER BY id").fetchall()
    finally:
        conn.close()


def _wait_for(traffic: JobTraffic, count: int) -> None:
    while traffic.done < count and not traffic.errors and traffic.thread.is_alive():
        traffic.stop.wait(0.01)


def test_a_backup_taken_while_jobs_run_restores_every_job_and_secret(tmp_path, monkeypatch):
    for (scope, name), value in SECRETS.items():
        vault.put(scope, name, value, actor="alice", settings=current())
    archive = tmp_path / "bot-backup.tar.gz"
    with JobTraffic() as traffic:
        _wait_for(traffic, 30)
        before = traffic.done
        assert backup_cli.main([str(archive)]) == 0
        _wait_for(traffic, traffic.done + 30)
    assert not traffic.errors, traffic.errors
    assert traffic.done > before  # jobs kept running around the backup
    original = _jobs(tmp_path / "data" / "bot.db")

    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert restore_cli.main([str(archive)]) == 0
    restored = _jobs(tmp_path / "elsewhere" / "bot.db")
    assert before <= len(restored) < len(original)
    # one consistent moment: a prefix of the jobs, each finished before the next was queued
    assert [row[:2] for row in restored] == [row[:2] for row in original[:len(restored)]]
    assert {row[2] for row in restored[:-1]} == {"done"}
    assert {key: vault.get(*key, settings=current()) for key in SECRETS} == SECRETS
    assert (tmp_path / "elsewhere" / "secret.key").stat().st_mode & 0o777 == 0o600
    conn = sqlite3.connect(tmp_path / "elsewhere" / "bot.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_the_archive_is_readable_by_its_owner_only(tmp_path):
    store.connect(settings=current()).close()
    archive = tmp_path / "b.tar.gz"
    backup.backup(archive, current())
    assert archive.stat().st_mode & 0o777 == 0o600


def test_restore_refuses_to_replace_a_database_without_force(tmp_path):
    vault.put("user:alice", "openai_api_key", "sk-alice-0123456789abcdef", actor="alice", settings=current())
    archive = tmp_path / "b.tar.gz"
    backup.backup(archive, current())
    with pytest.raises(backup.BackupError, match="--force"):
        backup.restore(archive, current())
    done = backup.restore(archive, current(), force=True)
    assert done.moved_aside is not None and done.moved_aside.exists()
    assert vault.get("user:alice", "openai_api_key", settings=current()) == "sk-alice-0123456789abcdef"


def test_an_archive_with_anything_else_is_refused_before_the_data_dir_is_touched(tmp_path):
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as archive:
        link = tarfile.TarInfo("bot.db")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    with pytest.raises(backup.BackupError, match="not a bot backup"):
        backup.restore(evil, current())
    assert not (tmp_path / "data" / "bot.db").exists()


def test_a_backup_whose_key_does_not_open_its_secrets_is_refused(tmp_path, monkeypatch):
    vault.put("user:alice", "openai_api_key", "sk-alice-0123456789abcdef", actor="alice", settings=current())
    archive = tmp_path / "b.tar.gz"
    backup.backup(archive, current())
    with tarfile.open(archive) as original:
        members = {m.name: original.extractfile(m).read() for m in original}
    members["secret.key"] = b"QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUE=\n"
    tampered = tmp_path / "t.tar.gz"
    with tarfile.open(tampered, "w:gz") as out:
        for name, data in members.items():
            backup._add_bytes(out, name, data)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "elsewhere"))
    with pytest.raises(backup.BackupError, match="do not open"):
        backup.restore(tampered, current())
    assert not (tmp_path / "elsewhere" / "bot.db").exists()


def test_the_github_app_a_first_run_stored_comes_back_with_the_restore(tmp_path, monkeypatch):
    manifest.store({"id": 42, "pem": "pem", "webhook_secret": "w", "client_id": "c", "client_secret": "s",
                    "slug": "my-bot"}, current())
    archive = tmp_path / "b.tar.gz"
    assert backup_cli.main([str(archive)]) == 0
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "elsewhere"))
    assert restore_cli.main([str(archive)]) == 0
    assert manifest.stored(current().data_dir)["GITHUB_APP_ID"] == "42"


def test_restore_refuses_while_a_service_still_uses_the_database(tmp_path):
    db = store.connect(settings=current())
    archive = tmp_path / "b.tar.gz"
    backup.backup(archive, current())
    wakeup.beat(db, "host:1:abc", 0, 2, 0.0)  # a worker reported just now
    with pytest.raises(backup.BackupError, match="stop the service"):
        backup.restore(archive, current(), force=True)
    db.execute("UPDATE workers SET seen_at = 0")  # long gone (killed without saying goodbye)
    assert backup.restore(archive, current(), force=True).moved_aside is not None


def test_a_backup_copies_the_database_of_the_settings_it_is_handed(tmp_path):
    handed = Settings({"BOT_DATA_DIR": str(tmp_path / "handed")})
    db = store.connect(path=handed.data_dir / "bot.db")
    store.write(db, lambda conn: store.enqueue_delivery(
        conn, delivery_id="d1", event="issue_comment", action="created", kind="run", conversation="o/r#1",
        spec={"repo": "o/r", "number": 1, "author": "bob", "command": {"kind": "run"}}))
    backup.backup(tmp_path / "b.tar.gz", handed)
    with tarfile.open(tmp_path / "b.tar.gz") as archive:
        archive.extract("bot.db", tmp_path / "out", filter="data")
    assert [row[1] for row in _jobs(tmp_path / "out" / "bot.db")] == ["d1"]


def test_a_restore_goes_into_the_data_dir_of_the_settings_it_is_handed(tmp_path):
    vault.put("user:alice", "openai_api_key", "sk-alice-0123456789abcdef", actor="alice", settings=current())
    backup.backup(tmp_path / "b.tar.gz", current())
    handed = Settings({"BOT_DATA_DIR": str(tmp_path / "handed")})
    done = backup.restore(tmp_path / "b.tar.gz", handed)
    assert done.database == tmp_path / "handed" / "bot.db" and done.key_restored
    assert (tmp_path / "handed" / "secret.key").read_bytes() == (tmp_path / "data" / "secret.key").read_bytes()
