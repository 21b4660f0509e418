"""The price table is the relay's list of models: a model it cannot price is refused before it is
called, in the API's own error format and recorded, unless the operator priced it
(BOT_RELAY_PRICES). Money caps can no longer be passed by naming a model nobody priced, and every
metered call is held at the most any spelling of its request allows."""
from __future__ import annotations

import asyncio

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.record.recorder import Recorder
from bot.relay.budgets import Budget, Caps
from bot.relay.pricing import Price, PriceTable, builtin_table
from bot.relay.reservation import DEFAULT_MAX_OUTPUT
from bot.relay.server import ModelRelay, Upstream
from tests.fakes.provider import FakeProvider, FakeUsage, say
from tests.relay.conftest import REAL_KEY, model_calls, post
from tests.relay.test_reservation_spellings import ANSWER_SPELLINGS, OUTPUT_SPELLINGS

UNPRICED = {"model": "claude-future-9", "max_tokens": 100, "messages": [{"role": "user", "content": "hi"}]}


async def test_six_calls_to_an_unpriced_model_under_a_money_cap_never_reach_the_provider(fake, relay):
    fake.script(*[say("ok", usage=FakeUsage(input=70, output=30)) for _ in range(6)])
    async with relay("anthropic", budget=Budget(operator=Caps(turn_usd=0.5))) as r:
        answers = [await post(r, "/v1/messages", UNPRICED) for _ in range(6)]
    assert [a.status_code for a in answers] == [400] * 6
    assert fake.main_requests() == []


async def test_an_unpriced_model_is_refused_in_the_apis_format_naming_how_to_price_it(fake, relay, recorder, run_id):
    stops: list[str] = []
    async with relay("anthropic", on_stop=stops.append) as r:
        answer = await post(r, "/v1/messages", UNPRICED)
    error = answer.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "claude-future-9" in error["message"] and "BOT_RELAY_PRICES" in error["message"]
    assert [c["outcome"] for c in model_calls(recorder, run_id)] == ["refused:unpriced"]
    assert stops and "BOT_RELAY_PRICES" in stops[0]


async def test_a_gemini_model_named_in_the_path_is_judged_by_its_price(fake, relay):
    async with relay("google") as r, httpx.AsyncClient() as client:
        answer = await client.post(r.url + "/v1beta/models/gemini-9-ultra:generateContent",
                                   json={"contents": []}, headers={"x-goog-api-key": r.token})
    assert answer.status_code == 400 and answer.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert fake.requests == []


async def test_a_call_naming_no_model_is_refused(fake, relay):
    async with relay("openai") as r:
        answer = await post(r, "/v1/responses", {"input": "hi"}, {"authorization": f"Bearer {r.token}"})
    assert answer.status_code == 400 and fake.requests == []


async def test_a_model_the_operator_priced_is_called_and_charged_at_the_operators_price(fake, relay):
    fake.script(say("ok", usage=FakeUsage(input=1_000_000, output=0)))
    table = builtin_table()
    prices = PriceTable(table.models | {"claude-future-9": Price(input=7.0, output=7.0)}, table.aliases, "test")
    async with relay("anthropic", prices=prices) as r:
        answer = await post(r, "/v1/messages", UNPRICED)
    assert answer.status_code == 200 and r.calls[-1].cost_usd == 7.0


async def test_a_count_tokens_call_of_an_unpriced_model_costs_nothing_and_passes(fake, relay):
    async with relay("anthropic") as r:
        await post(r, "/v1/messages/count_tokens", {"model": "claude-future-9", "messages": []})
    assert r.calls[-1].outcome != "refused:unpriced" and r.stopped is None


async def test_geminis_snake_case_candidate_count_is_held_at_its_full_maximum(fake, relay):
    fake.script(say("ok"))
    body = {"contents": [], "generation_config": {"max_output_tokens": 100, "candidate_count": 4}}
    async with relay("google") as r, httpx.AsyncClient() as client:
        await client.post(r.url + "/v1beta/models/gemini-3.8-flash:generateContent", json=body,
                          headers={"x-goog-api-key": r.token})
    assert r.calls[-1].ceiling.output_tokens == 400


# ---------------------------------------------------------------- the property

_PATHS = {"anthropic": ("anthropic", "/v1/messages", "x-api-key"),
          "chat": ("openai", "/v1/chat/completions", "authorization"),
          "responses": ("openai", "/v1/responses", "authorization"),
          "gemini": ("google", "/v1beta/models/{model}:generateContent", "x-goog-api-key")}
_PRICED = sorted(builtin_table().models)
_MODELS = st.one_of(st.sampled_from(_PRICED),  # listed
                    st.sampled_from(_PRICED).map(lambda m: m + "-20250929"),  # dated: priced as its model
                    st.sampled_from(_PRICED).map(lambda m: m + "-turbo"),  # mutated: unknown
                    st.sampled_from(_PRICED).map(str.upper),
                    st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True))
_VALUE = {"n": st.integers(1, 4), "candidateCount": st.integers(1, 8), "candidate_count": st.integers(1, 8)}


@st.composite
def _requests(draw, api: str, model: str) -> dict:
    """A request of `api` with some of the spellings of its output limit and answer count."""
    request: dict = {"anthropic": {"model": model, "messages": []}, "chat": {"model": model, "messages": []},
                     "responses": {"model": model, "input": "hi"}, "gemini": {"contents": []}}[api]
    for container, name in draw(st.lists(st.sampled_from(OUTPUT_SPELLINGS[api] + ANSWER_SPELLINGS[api]),
                                         unique=True)):
        holder = request.setdefault(container, {}) if container else request
        holder[name] = draw(_VALUE.get(name, st.integers(1, 5000)))
    return request


def _listed(model: str, table: PriceTable) -> object:
    """The test's own reading of the table: the model (or its alias), else the model its dated name
    snapshots: every API's models are priced so."""
    return next((table.models[found] for name in (model, model.removesuffix("-20250929"))
                 for found in (name, table.aliases.get(name)) if found in table.models), None)


def _most(body: dict, spellings: list[tuple[str | None, str]], default: int) -> int:
    """The test's own reading of a request as the provider received it."""
    found = [holder[name] for container, name in spellings
             for holder in [body.get(container) if container else body] if isinstance(holder, dict) and name in holder]
    return max(found, default=default)


async def _one_call(fake: FakeProvider, recorder: Recorder, api: str, model: str, request: dict):
    provider, path, carrier = _PATHS[api]
    token_value = "{token}" if carrier != "authorization" else "Bearer {token}"
    relay = ModelRelay(Upstream(provider, REAL_KEY, base_url=fake.url), recorder, recorder.start_run(agent="t"))
    async with relay as r, httpx.AsyncClient(timeout=30) as client:
        answer = await client.post(r.url + path.format(model=model), json=request,
                                   headers={carrier: token_value.format(token=r.token)})
    return r, answer


def test_random_requests_of_each_api_are_refused_when_unpriced_and_held_at_their_maximum_when_priced(tmp_path):
    recorder = Recorder(tmp_path / "bot.db")
    table = builtin_table()
    with FakeProvider() as fake:
        @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(st.data(), st.sampled_from(sorted(_PATHS)), _MODELS)
        def check(data, api, model):
            request = data.draw(_requests(api, model))
            before = len(fake.requests)
            fake.script(say("ok"))
            r, answer = asyncio.run(_one_call(fake, recorder, api, model, request))
            [call] = r.calls
            if _listed(model, table) is None:
                assert answer.status_code == 400 and call.outcome == "refused:unpriced"
                assert len(fake.requests) == before
                return
            received = fake.requests[-1].body
            assert call.outcome != "refused:unpriced" and len(fake.requests) == before + 1
            assert call.ceiling.output_tokens == (_most(received, OUTPUT_SPELLINGS[api], DEFAULT_MAX_OUTPUT)
                                                  * _most(received, ANSWER_SPELLINGS[api], 1))

        check()


async def test_an_unpriced_name_that_is_not_a_plain_model_id_is_not_repeated_in_the_stop(fake, relay):
    async with relay("anthropic") as r:
        await post(r, "/v1/messages", dict(UNPRICED, model="@octo/team [click](https://evil.example)"))
    assert "a model with an unlisted name" in r.stopped and "evil" not in r.stopped and "@" not in r.stopped
