"""Relay test set-up: the fake provider (its own threads, a real HTTP server), a recorder on a real
SQLite file, and `relay(...)` to open a live relay in front of the fake."""
from __future__ import annotations

import json

import httpx
import pytest

from bot.record.recorder import Recorder
from bot.relay.retry import RetryPolicy
from bot.relay.server import ModelRelay, Upstream
from tests.fakes.provider import FakeProvider

REAL_KEY = "sk-real-provider-KEY-0123456789"


@pytest.fixture
def fake():
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def recorder(tmp_path) -> Recorder:
    return Recorder(tmp_path / "bot.db")


@pytest.fixture
def run_id(recorder) -> str:
    return recorder.start_run(agent="test")


@pytest.fixture
def relay(fake, recorder, run_id):
    """relay(provider="anthropic", **ModelRelay keywords) -> an unstarted relay in front of the fake."""

    def open_relay(provider: str = "anthropic", *, scope: str = "operator", fix_hint: str = "",
                   base_url: str | None = None, **kwargs) -> ModelRelay:
        kwargs.setdefault("retry", RetryPolicy(retries=2, max_wait_s=5))
        upstream = Upstream(provider, REAL_KEY, base_url=base_url or fake.url, scope=scope, fix_hint=fix_hint)
        return ModelRelay(upstream, recorder, run_id, **kwargs)

    return open_relay


def model_calls(recorder: Recorder, run_id: str) -> list[dict]:
    """The recorded model calls: the event row with its detail parsed."""
    return [dict(row, detail=json.loads(row["raw"])) for row in recorder.events(run_id) if row["kind"] == "model_call"]


ANTHROPIC = ("/v1/messages?beta=true", {"model": "claude-opus-4-8", "max_tokens": 100,
                                        "messages": [{"role": "user", "content": "hi"}]})


async def post(relay: ModelRelay, path: str, body: dict, headers: dict | None = None) -> httpx.Response:
    headers = headers if headers is not None else {"x-api-key": relay.token}
    async with httpx.AsyncClient(base_url=relay.url, timeout=30) as client:
        return await client.post(path, json=body, headers=headers)


def price_the_gateway_model(monkeypatch, folder) -> None:
    """An operator gateway's model as OpenCode names it there ("default", when BOT_OPENCODE_MODEL is
    unset) priced in the operator's table (BOT_RELAY_PRICES), as an operator must: the relay refuses a
    model its table cannot price."""
    prices = folder / "gateway-prices.json"
    prices.write_text(json.dumps({"date": "gateway", "models": {"default": {"input": 1.0, "output": 5.0}}}))
    monkeypatch.setenv("BOT_RELAY_PRICES", str(prices))


def header(request, name: str) -> str | None:
    """A header the fake provider received, whatever its case."""
    return next((v for k, v in request.headers.items() if k.lower() == name.lower()), None)
