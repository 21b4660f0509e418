"""Provider trouble is handled once, at the relay: busy providers are waited out and retried; a
rejected key ends the turn naming the key's scope and where to fix it."""
from __future__ import annotations

import socket
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from bot.config import Settings
from bot.relay import wire
from bot.relay.retry import RetryPolicy, asked_wait_s
from bot.relay.server import ModelRelay, Upstream
from tests.fakes.provider import fail, say
from tests.relay.conftest import ANTHROPIC, REAL_KEY, model_calls, post


async def test_429_with_retry_after_twice_then_success_gives_one_answer_and_two_retry_notes(
        fake, relay, recorder, run_id):
    notes: list[str] = []
    fake.script(fail(429, "slow down", retry_after="1"), fail(429, "slow down", retry_after="1"), say("the answer"))
    async with relay("anthropic", on_retry=notes.append, retry=RetryPolicy(retries=4, max_wait_s=60)) as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 200 and "the answer" in answer.text
    assert notes == ["provider busy (429), retrying in 1 s (retry 1 of 4)",
                     "provider busy (429), retrying in 1 s (retry 2 of 4)"]
    assert [e["raw"] for e in recorder.events(run_id) if e["kind"] == "model_retry"] == notes
    [call] = model_calls(recorder, run_id)
    assert (call["outcome"], call["detail"]["retries"]) == ("ok", 2)


async def test_an_overloaded_provider_is_retried(fake, relay):
    fake.script(fail(529, "overloaded", retry_after="0"), say("ok"))
    async with relay("anthropic") as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 200 and r.calls[-1].retries == 1


async def test_after_the_last_retry_the_providers_error_is_passed_on(fake, relay):
    fake.script(fail(500, "boom", retry_after="0"), fail(500, "boom", retry_after="0"), say("too late"))
    async with relay("anthropic", retry=RetryPolicy(retries=1)) as r:
        answer = await post(r, *ANTHROPIC)
    assert (answer.status_code, answer.json()["error"]["message"]) == (500, "boom")
    assert r.calls[-1].outcome == "http:500"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the block ends: nothing listens there


async def test_a_refused_connection_ends_the_turn_at_once_naming_the_upstream(relay):
    """Connection refused is not worth minutes of retries: one line naming the host that could not be
    reached, never the relay's own loopback address, and the episode ends with it."""
    notes, stops = [], []
    port = _closed_port()
    async with relay("anthropic", base_url=f"http://127.0.0.1:{port}", on_retry=notes.append,
                     on_stop=stops.append, retry=RetryPolicy(retries=4, max_wait_s=60)) as r:
        answer = await post(r, *ANTHROPIC)
        relay_address = r.url
    assert answer.status_code == 502 and answer.json()["error"]["type"] == "api_error"
    assert notes == [] and len(stops) == 1
    assert stops[0].startswith(f"the model provider at 127.0.0.1:{port} could not be reached: connection refused")
    assert relay_address.removeprefix("http://") not in stops[0]
    assert r.calls[-1].outcome == "error:unreachable"


class _NoSuchName(wire.Transport):
    """A pool whose name lookups fail, as they do for a name no resolver knows."""

    async def _connect(self, key: tuple[str, str, int], timeout: float | None) -> wire._Connection:
        raise httpx.ConnectError("[Errno -2] Name or service not known")


async def test_a_provider_name_that_does_not_resolve_ends_the_turn_naming_it(relay):
    stops: list[str] = []
    async with relay("openai", base_url="https://gateway.example.invalid/v1", on_stop=stops.append,
                     transport=_NoSuchName(httpx.Limits())) as r:
        answer = await post(r, "/v1/responses", {"model": "gpt-5", "input": "hi"},
                            headers={"authorization": f"Bearer {r.token}"})
    assert answer.status_code == 502
    assert stops == ["the model provider at gateway.example.invalid could not be reached: its name does not "
                     "resolve (check the network, and BOT_<AGENT>_BASE_URL if it is set)"]


async def test_a_connection_that_drops_mid_call_is_still_retried(fake, relay):
    notes: list[str] = []
    fake.script(fail(500, "boom", retry_after="0"), say("fine"))
    async with relay("anthropic", on_retry=notes.append, retry=RetryPolicy(retries=1, max_wait_s=0)) as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 200 and len(notes) == 1


async def test_a_rejected_key_ends_the_turn_naming_its_scope_and_where_to_fix_it(fake, relay):
    stops: list[str] = []
    fake.script(fail(401, "invalid x-api-key sk-real-pro...6789"), say("never"))
    async with relay("anthropic", scope="repository", on_stop=stops.append,
                     fix_hint="a repository admin can connect a new key at https://bot.example/settings") as r:
        rejected = await post(r, *ANTHROPIC)
        again = await post(r, *ANTHROPIC)
    message = rejected.json()["error"]["message"]
    assert rejected.status_code == 401 and rejected.json()["error"]["type"] == "authentication_error"
    assert "the anthropic key of the repository scope was rejected by the provider (HTTP 401 authentication_error)" in message
    assert "https://bot.example/settings" in message and "sk-real" not in message
    assert len(stops) == 1 and stops[0] in message
    assert again.status_code == 400 and len(fake.main_requests()) == 1


def test_retry_after_as_an_http_date_is_read():
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert asked_wait_s({"retry-after": format_datetime(now + timedelta(seconds=20), usegmt=True)}, now) == 20


def test_retry_after_ms_wins_over_retry_after():
    assert asked_wait_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5


def test_a_long_retry_after_is_capped():
    assert RetryPolicy(retries=3, max_wait_s=60).wait_s(1, {"retry-after": "3600"}) == 60


@pytest.mark.parametrize("attempt,expected", [(1, 1.0), (2, 2.0), (3, 4.0)])
def test_without_retry_after_the_backoff_doubles(attempt, expected):
    assert RetryPolicy(retries=3, max_wait_s=60).wait_s(attempt, {}) == expected


def test_the_retry_policy_is_the_one_in_the_settings_handed_down(monkeypatch):
    monkeypatch.setenv("BOT_RELAY_RETRIES", "9")
    settings = Settings({"BOT_RELAY_RETRIES": "1", "BOT_RELAY_RETRY_MAX_WAIT": "7"})
    assert RetryPolicy.from_settings(settings) == RetryPolicy(retries=1, max_wait_s=7.0)


def test_a_relay_given_no_retry_policy_retries_as_the_configuration_tables_defaults(recorder, run_id, monkeypatch):
    monkeypatch.setenv("BOT_RELAY_RETRIES", "0")
    relay = ModelRelay(Upstream("anthropic", REAL_KEY), recorder, run_id)
    assert relay.retry == RetryPolicy.from_settings(Settings({})) == RetryPolicy()


async def test_a_provider_address_that_is_not_http_ends_the_turn_saying_so(fake, relay):
    stops: list[str] = []
    async with relay("anthropic", base_url="ftp://gateway.example", on_stop=stops.append) as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 502 and answer.json()["error"]["type"] == "api_error"
    assert stops == ["the model provider's address is not an http or https URL (check BOT_<AGENT>_BASE_URL if it "
                     "is set)"]
    assert r.calls[-1].outcome == "error:unreachable" and fake.requests == []
