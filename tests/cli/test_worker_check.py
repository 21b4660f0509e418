"""`bot worker --check`: the worker's probe (the Kubernetes worker Deployment's liveness and
readiness), which serves no HTTP: exit 0 while a worker pool of this host heartbeats in the
database, else 1 with one line saying what is missing. Against a real SQLite database."""
from __future__ import annotations

import time

from bot.cli.main import main
from bot.service import store, wakeup
from tests.entry_settings import current


def _beat(owner: str = "this:1:abc", capacity: int = 2, age_s: float = 0.0, host: str | None = None) -> None:
    db = store.connect(settings=current())
    wakeup.beat(db, owner, 0, capacity, time.time())
    db.execute("UPDATE workers SET seen_at = ?, host = COALESCE(?, host) WHERE owner = ?",
               [time.time() - age_s, host, owner])
    db.close()


def test_a_fresh_heartbeat_of_this_hosts_worker_passes(capsys):
    _beat()
    assert main(["worker", "--check"]) == 0
    assert "heartbeat" in capsys.readouterr().out


def test_a_stale_heartbeat_fails_the_probe(capsys):
    _beat(age_s=wakeup.ALIVE_S + 5)
    assert main(["worker", "--check"]) == 1
    assert "no heartbeat" in capsys.readouterr().err


def test_another_hosts_worker_does_not_stand_for_this_one():
    _beat(host="some-other-pod")
    assert main(["worker", "--check"]) == 1


def test_a_service_without_workers_on_this_host_is_not_a_worker():
    _beat(capacity=0)
    assert main(["worker", "--check"]) == 1


def test_no_database_yet_fails_the_probe_in_one_line(capsys):
    assert main(["worker", "--check"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
