"""End to end on one PostgreSQL: two intake replicas (`bot serve`, BOT_WORKERS=0, as two machines
behind one load balancer would run them) count one address's wrong fire tokens together, so ten
wrong tokens spread over both block the address on both. (The developer profile runs one process on
SQLite: one replica, whose count tests/automations/test_fire_limit.py shows.)"""
from __future__ import annotations

import os

import httpx
import pytest

from tests.spine.service import REPO, Service, make_remote, seeded_github, service_env
from tests.store.conftest import TEST_KEY

pytestmark = pytest.mark.e2e
WRONG = {"Authorization": "Bearer bota_" + "z" * 43}


@pytest.fixture
def replicas(tmp_path, pg_cluster):
    gh = seeded_github()
    url = pg_cluster.new_database()
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_DATABASE_URL=url,
                      BOT_SECRET_KEY=TEST_KEY, BOT_WORKERS="0")
    os.environ["BOT_SECRET_KEY"] = TEST_KEY
    started: list[Service] = []
    try:
        for name in ("one", "two"):
            own = dict(env, BOT_DATA_DIR=str(tmp_path / name), BOT_PORT=str(_port()))
            started.append(Service(own, tmp_path / f"{name}.log").start())
        yield started
    finally:
        for service in started:
            service.stop()
        gh.stop()
        os.environ.pop("BOT_SECRET_KEY", None)


def _port() -> int:
    from tests.spine.service import free_port
    return free_port()


def _fire(service: Service) -> httpx.Response:
    return httpx.post(f"{service.url}/automations/{REPO}/nightly", headers={**service.headers, **WRONG}, timeout=30)


def test_wrong_tokens_spread_over_two_replicas_block_the_address_on_both(replicas):
    one, two = replicas
    assert [_fire(one if n % 2 else two).status_code for n in range(10)] == [401] * 10
    for replica in (one, two):
        blocked = _fire(replica)
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
