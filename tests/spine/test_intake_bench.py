"""The intake benchmark is fair to every endpoint it compares."""
from __future__ import annotations

from collections import Counter

from bench.intake import PATHS, _round_order


def test_over_six_rounds_every_endpoint_runs_first_second_and_third_alike():
    orders = [_round_order(n) for n in range(6)]
    assert all(sorted(order) == sorted(PATHS) for order in orders)
    for place in range(len(PATHS)):
        assert Counter(order[place] for order in orders) == dict.fromkeys(PATHS, 2)


def test_consecutive_rounds_do_not_start_with_the_same_endpoint():
    assert all(_round_order(n)[0] != _round_order(n + 1)[0] for n in range(12))


def test_a_failed_floor_insert_leaves_no_transaction_open_for_the_webhooks_writes(monkeypatch):
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from bench.intake import _floor
    from bot.web.app import create_app
    from tests.spine.helpers import configure_app, payload, signed

    configure_app(monkeypatch)
    app = create_app(start_workers=False)
    app.router.routes.append(Route("/floor", _floor, methods=["POST"]))
    body, headers = signed(payload("issue_comment.created", "@bot codex explain this"), "issue_comment")
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
        assert client.post("/floor", content=body, headers=headers).status_code == 202
        assert client.post("/floor", content=body, headers=headers).status_code == 500  # the same comment again
        assert not app.state.db.in_transaction
