"""Wrong fire tokens from one address: after ten within a minute, that address is answered 429
until the minute has passed; other addresses are not slowed. The count is the database's, so every
replica sees the same one; it holds at most its bound of addresses, and an expired one is dropped
(bot/web/fire_limit.py), on SQLite and PostgreSQL."""
from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.web.fire_limit import FailureLimiter
from tests.entry_settings import current


class Clock:
    def __init__(self) -> None:
        self.now = 1_796_644_800.0

    def __call__(self) -> float:
        return self.now


def _limiter(clock: Clock, **bounds: int) -> FailureLimiter:
    return FailureLimiter(bot_db.connect(settings=current()), clock=clock, **bounds)


def test_an_address_is_blocked_after_its_failures_until_the_window_passes(backend):
    clock = Clock()
    limiter = _limiter(clock, max_failures=3, window_s=60)
    for _ in range(3):
        assert limiter.blocked("a") is None
        limiter.failed("a")
    assert limiter.blocked("a") == 61 and limiter.blocked("b") is None
    clock.now += 60.5
    assert limiter.blocked("a") is None


def test_old_failures_do_not_count(backend):
    clock = Clock()
    limiter = _limiter(clock, max_failures=2, window_s=60)
    limiter.failed("a")
    clock.now += 61
    limiter.failed("a")
    assert limiter.blocked("a") is None


def test_two_replicas_count_one_addresses_failures_together(backend):
    clock = Clock()
    one, other = _limiter(clock, max_failures=4, window_s=60), _limiter(clock, max_failures=4, window_s=60)
    for limiter in (one, other, one, other):
        limiter.failed("a")
    assert one.blocked("a") is not None and other.blocked("a") is not None


def test_at_most_its_number_of_addresses_is_remembered(backend):
    clock = Clock()
    limiter = _limiter(clock, max_failures=1, window_s=60, max_clients=2)
    for address in ("a", "b", "c"):
        clock.now += 1
        limiter.failed(address)
    assert limiter.blocked("a") is None and limiter.blocked("c") is not None
    assert limiter.remembered() == 2


def test_an_address_whose_window_passed_is_forgotten(backend):
    clock = Clock()
    limiter = _limiter(clock, max_failures=5, window_s=60)
    limiter.failed("a")
    clock.now += 61
    limiter.failed("b")
    assert limiter.remembered() == 1


def test_the_address_is_not_stored_as_it_came(backend):
    limiter = _limiter(Clock())
    limiter.failed("203.0.113.9")
    assert "203.0.113.9" not in str(bot_db.connect(settings=current()).query("SELECT * FROM fire_failures"))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=12))
def test_any_address_text_is_counted_and_the_table_stays_bounded(addresses):
    with tempfile.TemporaryDirectory() as folder:
        db = bot_db.connect(path=Path(folder) / "bot.db")
        clock = Clock()
        limiter = FailureLimiter(db, max_failures=2, window_s=60, max_clients=4, clock=clock)
        for address in addresses:
            clock.now += 0.001
            limiter.failed(address)
        assert limiter.remembered() <= 4
        last = addresses[-1]
        limiter.failed(last)
        assert limiter.blocked(last) is not None
        db.close()


def _replica():
    """One replica's fire route, on its own connection to the shared database."""
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from bot.web import fire_route

    app = Starlette(routes=fire_route.routes)
    app.state.db, app.state.settings, app.state.pool = bot_db.connect(settings=current()), current(), None
    return TestClient(app)


def test_wrong_tokens_sent_to_two_replicas_block_the_address_on_both(backend):
    one, other = _replica(), _replica()
    wrong = {"Authorization": "Bearer bota_" + "x" * 43}
    answers = [(one if n % 2 else other).post("/automations/o/r/nightly", headers=wrong).status_code
               for n in range(10)]
    assert answers == [401] * 10
    for replica in (one, other):
        blocked = replica.post("/automations/o/r/nightly", headers=wrong)
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1


def test_a_wrong_and_a_revoked_token_get_the_same_answer_and_count_the_same(backend):
    from bot.automations import fire_tokens

    replica = _replica()
    db = bot_db.connect(settings=current())
    revoked = fire_tokens.issue(db, "o/r", "nightly", repo_id=1, installation_id=1, by="alice")
    fire_tokens.revoke(db, "o/r", "nightly")
    answers = [replica.post("/automations/o/r/nightly", headers={"Authorization": f"Bearer {token}"})
               for token in (revoked, "bota_" + "y" * 43)]
    assert [(a.status_code, a.content, a.headers["www-authenticate"]) for a in answers] == \
        [(401, answers[0].content, "Bearer")] * 2
    assert db.query("SELECT failures FROM fire_failures") == [{"failures": 2}]
