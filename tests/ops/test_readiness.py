"""/readyz and the token-guarded /metrics of the main port, on a small app around bot.web.health
with a real SQLite database."""
from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from bot.db import connect
from bot.web import health
from tests.entry_settings import handed


@pytest.fixture
def app(tmp_path):
    app = Starlette(routes=[Route("/readyz", health.readyz), Route("/metrics", health.metrics_on_main_port)])
    app.state.db = connect(path=tmp_path / "bot.db")
    app.state.missing_config = ["GITHUB_APP_ID is not set"]
    app.state.pool = None
    return handed(app)


def test_readyz_is_unready_when_the_database_is_unreachable(app):
    app.state.db.close()
    answer = TestClient(app).get("/readyz")
    assert answer.status_code == 503 and answer.json()["database"].startswith("unreachable")


def test_readyz_is_unready_while_the_app_is_not_configured(app):
    answer = TestClient(app).get("/readyz")
    assert answer.status_code == 503 and answer.json()["database"] == "ok"
    assert answer.json()["app"].startswith("not configured")


def test_metrics_on_the_main_port_need_the_token(app, monkeypatch):
    monkeypatch.setenv("BOT_METRICS_TOKEN", "s3cret-metrics-token")
    client = TestClient(handed(app))
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", headers={"authorization": "Bearer wrong"}).status_code == 401
    answer = client.get("/metrics", headers={"authorization": "Bearer s3cret-metrics-token"})
    assert answer.status_code == 200 and "# TYPE bot_jobs gauge" in answer.text
