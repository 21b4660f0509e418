"""A provider that cannot serve the episode, as the relay saw it: overloaded, out of quota or rate
limited past the retries is classified from the upstream status, body and Retry-After, recorded
per episode, and ends the episode (the fallback to another agent starts from that record)."""
from __future__ import annotations

import json

import httpx

from bot.relay.retry import RetryPolicy
from bot.relay.unavailable import EVENT, ProviderUnavailable, classify
from tests.fakes.provider import _error_body, fail, quota, say
from tests.relay.conftest import ANTHROPIC, post

RESPONSES = ("/v1/responses", {"model": "gpt-5", "input": "hi"})


def test_anthropics_529_is_overloaded_with_its_words_and_retry_after():
    found = classify(529, _error_body("anthropic", 529, "Overloaded"), {"Retry-After": "30"}, "anthropic")
    assert found == ProviderUnavailable("overloaded", 529, 30.0, "Overloaded", "anthropic")


def test_openais_insufficient_quota_is_a_quota_error():
    found = classify(429, _error_body("responses", 429, "You exceeded your current quota", "insufficient_quota"), {})
    assert found is not None and (found.kind, found.retry_after_s) == ("quota", None)


def test_geminis_resource_exhausted_is_a_quota_error():
    found = classify(429, _error_body("gemini", 429, "Quota exceeded for metric"), {"retry-after": "60"})
    assert found is not None and (found.kind, found.words) == ("quota", "Quota exceeded for metric")


def test_a_plain_429_is_rate_limited():
    found = classify(429, _error_body("anthropic", 429, "Number of request tokens has exceeded your limit"), {})
    assert found is not None and found.kind == "rate_limited"


def test_a_server_error_is_not_an_unavailability():
    assert classify(500, _error_body("anthropic", 500, "boom"), {}) is None


def test_a_503_saying_overloaded_is_overloaded():
    found = classify(503, _error_body("gemini", 503, "The model is overloaded. Please try again later."), {})
    assert found is not None and found.kind == "overloaded"


def test_the_providers_words_are_bounded():
    found = classify(529, _error_body("anthropic", 529, "x" * 5000), {})
    assert found is not None and len(found.words) == 300


def test_a_body_that_is_not_json_gives_its_text_as_the_words():
    found = classify(529, b"<html>upstream overloaded</html>", {})
    assert found is not None and found.words == "<html>upstream overloaded</html>"


async def test_529_past_the_retries_ends_the_episode_and_is_recorded_for_it(fake, relay, recorder, run_id):
    stops: list[str] = []
    fake.script(*[fail(529, "Overloaded", retry_after="0")] * 3, say("never"))
    async with relay("anthropic", on_stop=stops.append, retry=RetryPolicy(retries=2, max_wait_s=5)) as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 529 and answer.json()["error"]["type"] == "overloaded_error"
    [event] = [e for e in recorder.events(run_id) if e["kind"] == EVENT]
    assert ProviderUnavailable.from_json(event["raw"]) == ProviderUnavailable("overloaded", 529, 0.0, "Overloaded",
                                                                              "anthropic")
    assert r.stop_kind == "unavailable" and stops == [r.stopped]
    assert stops[0] == "the anthropic provider is overloaded (HTTP 529); it asks to retry in 1 s"


async def test_a_429_asking_for_longer_than_the_longest_wait_is_not_retried(fake, relay):
    fake.script(fail(429, "slow down", retry_after="3600"), say("too soon"))
    async with relay("anthropic", retry=RetryPolicy(retries=4, max_wait_s=60)) as r:
        answer = await post(r, *ANTHROPIC)
    assert answer.status_code == 429 and answer.headers["retry-after"] == "3600"
    assert len(fake.main_requests()) == 1 and r.unavailable is not None
    assert (r.unavailable.kind, r.unavailable.retry_after_s) == ("rate_limited", 3600.0)


async def test_a_quota_error_ends_the_episode_as_quota(fake, relay):
    fake.script(*[quota()] * 3)
    async with relay("openai", retry=RetryPolicy(retries=2, max_wait_s=5)) as r:
        answer = await post(r, *RESPONSES, headers={"authorization": f"Bearer {r.token}"})
    assert answer.status_code == 429 and r.unavailable is not None and r.unavailable.kind == "quota"
    assert "exceeded your current quota" in r.unavailable.words


async def test_a_503_that_is_not_an_overload_is_passed_on_as_the_provider_sent_it(fake, relay):
    fake.script(*[fail(503, "backend maintenance", retry_after="0")] * 3)
    async with relay("openai", retry=RetryPolicy(retries=2, max_wait_s=5)) as r:
        answer = await post(r, *RESPONSES, headers={"authorization": f"Bearer {r.token}"})
    assert answer.status_code == 503 and json.loads(answer.content)["error"]["message"] == "backend maintenance"
    assert r.unavailable is None and r.stopped is None


def test_a_chatgpt_plans_usage_limit_is_a_quota_error():
    body = json.dumps({"error": {"type": "usage_limit_reached", "message": "You've hit your usage limit."}})
    found = classify(429, body.encode(), {})
    assert found is not None and found.kind == "quota"


def test_the_fakes_outage_for_one_key_leaves_another_key_answered(fake):
    fake.outage(fail(529, "Overloaded"), key="sk-down-0123456789")
    body = {"model": "claude-opus-4-8", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    down = httpx.post(f"{fake.url}/v1/messages", json=body, headers={"x-api-key": "sk-down-0123456789"})
    up = httpx.post(f"{fake.url}/v1/messages", json=body, headers={"x-api-key": "sk-up-0123456789"})
    assert (down.status_code, down.json()["error"]["type"], up.status_code) == (529, "overloaded_error", 200)


def test_the_fakes_quota_error_has_openais_and_geminis_shapes(fake):
    fake.script(quota(), quota())
    openai = httpx.post(f"{fake.url}/v1/responses", json={"model": "gpt-5", "input": "hi"})
    gemini = httpx.post(f"{fake.url}/v1beta/models/gemini-2.5-pro:generateContent", json={"contents": []})
    assert (openai.status_code, openai.json()["error"]["type"], openai.json()["error"]["code"]) == (
        429, "insufficient_quota", "insufficient_quota")
    assert (gemini.status_code, gemini.json()["error"]["status"]) == (429, "RESOURCE_EXHAUSTED")
