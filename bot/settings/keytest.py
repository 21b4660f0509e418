"""'Test this key': one cheap call to the provider, through the same upstream a run would use.

The upstream comes from the episode's own `plan()` (bot/episode/model_channel.py): the provider, the
operator's gateway (BOT_<AGENT>_BASE_URL) and whether the key travels as a bearer token. Kinds a run
passes straight into the sandbox (an OpenCode Anthropic key) are tested against their provider the
same way. The call is the cheapest one the provider's wire API declares (its record's `key_test`,
bot/relay/wire_apis/): a one-token answer of its cheapest model. A provider whose API declares none,
and login files (auth.json), are not tested here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from adapters import base as adapters
from adapters.base import RelayChannel
from bot.config import Settings
from bot.credentials.resolve import Kind, as_credentials
from bot.episode.model_channel import plan
from bot.relay import wire_api
from bot.relay.server import Upstream
from bot.relay.wire_api import CheapCall
from bot.settings import unreachable

TIMEOUT = 20


@dataclass(frozen=True)
class KeyTest:
    ok: bool
    message: str


def upstream_for(kind: Kind, value: str, settings: Settings) -> Upstream | None:
    chosen = plan(kind.agent, as_credentials(kind, value, "requester"), settings).upstream
    if chosen is not None and chosen.login is not None:
        return None  # a ChatGPT login (auth.json) is not tested here
    channel = _channel_of(kind.env[0]) if chosen is None and kind.env else None
    if channel is None:
        return chosen
    return Upstream(channel.provider, value, bearer=channel.bearer)


def _channel_of(variable: str) -> RelayChannel | None:
    """The provider a key in `variable` belongs to, as the adapters' relay channels declare it."""
    return next((channel for agent in adapters.names() for channel in adapters.get(agent).relay_channels
                 if channel.variable == variable), None)


async def try_key(kind: Kind, value: str, settings: Settings) -> KeyTest:
    """Whether the provider accepts the key, in one sentence (never the key), with the model the
    agent's runs ask for (BOT_<AGENT>_MODEL) through the gateway they use, as `settings` say."""
    upstream = upstream_for(kind, value, settings)
    cheap = cheapest_call(upstream.provider) if upstream is not None else None
    if upstream is None or cheap is None:
        return KeyTest(False, f"A {kind.label} cannot be tested from this page; the next run will tell.")
    path, body, headers = _request(upstream, cheap, kind.agent, settings.agent_model(kind.agent))
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as client:
            response = await client.post(upstream.root + path, json=body, headers=headers)
    except httpx.HTTPError as exc:
        return KeyTest(False, f"The provider ({upstream.root}) could not be reached: {unreachable.reason(exc)}.")
    return _verdict(kind, response.status_code)


def _verdict(kind: Kind, status: int) -> KeyTest:
    if status == 200:
        return KeyTest(True, f"The provider accepted this {kind.label}.")
    if status in (401, 403):
        return KeyTest(False, f"The provider rejected this {kind.label} (HTTP {status}). "
                              "Connect a new one: rotate it below.")
    if status == 429:
        return KeyTest(True, f"The provider accepted this {kind.label} but is rate-limiting it (HTTP 429).")
    return KeyTest(False, f"The provider answered HTTP {status}; the key may still be valid. Try again later.")


def cheapest_call(provider: str) -> CheapCall | None:
    """The key test a wire API declares for `provider`, None when none does."""
    return next((api.key_test for api in wire_api.records()
                 if api.key_test is not None and provider in api.key_test.models), None)


def _request(upstream: Upstream, cheap: CheapCall, agent: str,
             operator_model: str | None) -> tuple[str, dict[str, Any], dict[str, str]]:
    # a CLI that speaks to several providers names a model of any of them: not this key's own
    model = operator_model if not adapters.get(agent).provider_keys else None
    model = (model or cheap.models[upstream.provider]).rpartition("/")[2]
    path, body, headers = cheap.request(model, bool(upstream.bearer))
    name, header = upstream.key_header()
    return path, body, {name.decode(): header.decode(), **headers}
