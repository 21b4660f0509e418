"""The adapters repeat a few facts of the wire APIs' records (adapters/ never imports bot): Codex's
ChatGPT base path, OpenCode's providers that take their key in a header of their own, and its base
path per provider; and every relay channel names a provider of a record. Each must agree with the records
(bot/relay/wire_apis/), or a CLI is pointed at a path the relay does not forward, or sends its key
where the relay does not read it."""
from __future__ import annotations

import pytest

from adapters import base, codex, opencode
from bot.relay import apis, wire_api
from bot.relay.wire_api import ModelPath, Path

CHANNELS = [(name, channel) for name in base.names() for channel in base.get(name).relay_channels]


def _paths_of(provider: str) -> list[str]:
    """Every path (a ModelPath as a person reads it) of the records that call `provider`."""
    return [path.path.decode() if isinstance(path, Path) else path.shown
            for record in wire_api.records() if provider in record.providers for path in record.paths
            if apis.serves(provider, _route_of(record, path))]


def _route_of(record: wire_api.WireApi, path: Path | ModelPath) -> apis.Route:
    return apis.Route(record.name, record.name, only=path.only if isinstance(path, Path) else None)


@pytest.mark.parametrize(("agent", "channel"), CHANNELS, ids=[f"{a}-{c.variable}" for a, c in CHANNELS])
def test_a_relay_channels_provider_is_a_records_and_a_key_not_sent_as_bearer_goes_in_its_own_header(agent, channel):
    """A bearer channel may name any provider (an OAuth token is a bearer even where API keys take
    a header of their own); a key that is not a bearer goes in the record's own header, never
    bare in `authorization`."""
    assert channel.provider in apis.KEY_HEADER, f"{agent}: no wire API record declares {channel.provider!r}"
    assert channel.bearer or apis.KEY_HEADER[channel.provider] != "authorization", (
        f"{agent}'s {channel.variable} is not sent as a bearer, but {channel.provider}'s record takes its key "
        "as authorization")


def test_opencodes_own_key_header_providers_are_those_whose_record_takes_the_key_elsewhere_than_authorization():
    own = {provider for provider in opencode.PROVIDER_KEYS if apis.KEY_HEADER.get(provider) != "authorization"}
    assert set(opencode.OWN_KEY_HEADER) == own


@pytest.mark.parametrize("provider", sorted(opencode.PROVIDER_KEYS))
def test_opencodes_base_path_of_a_provider_holds_a_path_its_record_forwards(provider):
    _variable, prefix = opencode.PROVIDER_KEYS[provider]
    served = _paths_of(provider)
    assert any(path.startswith(prefix + "/") for path in served), (provider, prefix, served)


def test_codexs_chatgpt_base_holds_the_paths_the_record_keeps_for_the_chatgpt_login():
    route = apis.route("POST", f"{codex.CHATGPT_BASE}/responses".encode())
    assert route is not None and route.only is not None, f"the relay forwards no POST {codex.CHATGPT_BASE}/responses"
    owned = [path.path.decode() for record in wire_api.records() for path in record.paths
             if isinstance(path, Path) and path.only == route.only]
    assert owned and all(path.startswith(codex.CHATGPT_BASE + "/") for path in owned), owned

