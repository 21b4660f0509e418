"""The proxy's decisions without a sandbox: name policy, address vetting, SNI parsing."""
from __future__ import annotations

import asyncio
import ssl

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox.egress import Policy, is_public, normalize_host, read_client_hello, server_name


@pytest.mark.parametrize("address", [
    "127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0",
    "224.0.0.1", "203.0.113.80", "::1", "fe80::1", "fc00::1", "::ffff:10.0.0.1", "::ffff:8.8.8.8",
    "2002:0a00:0001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "64:ff9b::a00:1", "not-an-ip"])
def test_non_public_addresses_refused(address):
    """Loopback, private, link-local, CGNAT, multicast, TEST-NET and IPv6 wrappers are not public."""
    assert is_public(address) is False


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_accepted(address):
    """Globally routable addresses pass."""
    assert is_public(address) is True


@given(st.ip_addresses(v=4, network="10.0.0.0/8") | st.ip_addresses(v=4, network="127.0.0.0/8")
       | st.ip_addresses(v=4, network="169.254.0.0/16") | st.ip_addresses(v=6, network="fc00::/7"))
def test_any_private_range_address_refused(address):
    """Every address of the private, loopback and link-local ranges is refused."""
    assert is_public(str(address)) is False


def test_suffix_entry_matches_subdomains_only():
    """'.anthropic.com' matches api.anthropic.com, not anthropic.com nor evilanthropic.com."""
    policy = Policy.build([".anthropic.com"])
    assert policy.check("api.anthropic.com", 443)[0] is True
    assert policy.check("anthropic.com", 443)[1] == "blocked-by-allowlist"
    assert policy.check("evilanthropic.com", 443)[1] == "blocked-by-allowlist"


def test_wildcard_entry_is_a_suffix():
    """'*.googleapis.com' is treated as '.googleapis.com'."""
    policy = Policy.build(["*.googleapis.com"])
    assert policy.check("generativelanguage.googleapis.com", 443)[0] is True
    assert policy.check("googleapis.com", 443)[0] is False


def test_exact_entry_defaults_to_port_443():
    """An entry without a port allows 443 only; an explicit port allows that port."""
    policy = Policy.build(["api.openai.com", "mirror.example.com:8443"])
    assert policy.check("api.openai.com", 443)[0] is True
    assert policy.check("api.openai.com", 80)[1] == "port-not-allowed"
    assert policy.check("mirror.example.com", 8443)[0] is True
    assert policy.check("mirror.example.com", 443)[1] == "port-not-allowed"


def test_ip_literal_needs_verbatim_listing():
    """An IP literal is refused unless that exact literal is listed."""
    policy = Policy.build(["8.8.8.8", ".example.com"])
    assert policy.check("8.8.8.8", 443)[0] is True
    assert policy.check("8.8.4.4", 443)[1] == "ip-literal-not-allowed"


def test_gateway_allows_private_by_exact_host_and_port():
    """An operator gateway is allowed at its exact port and marked private-ok; other ports are not."""
    policy = Policy.build([], gateways=["llm.internal:8443"])
    assert policy.check("llm.internal", 8443) == (True, "operator-gateway", True)
    assert policy.check("llm.internal", 443)[0] is False


@pytest.mark.parametrize("raw,expected", [("API.OpenAI.com.", "api.openai.com"),
                                          ("bücher.example", "xn--bcher-kva.example"),
                                          ("[::1]", "::1")])
def test_names_normalized(raw, expected):
    """Names are lower-cased, trailing dot stripped, IDNA-encoded; brackets dropped from IPv6."""
    assert normalize_host(raw) == expected


@pytest.mark.parametrize("raw", ["evil.com/x", "a@b.com", "a b.com", "x%2e.com", "a\\b"])
def test_names_with_smuggling_characters_rejected(raw):
    """'/ \\ @ % space' in a host name are rejected."""
    with pytest.raises(ValueError):
        normalize_host(raw)


def _client_hello(hostname: str) -> bytes:
    context = ssl.create_default_context()
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=hostname)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


async def test_sni_read_from_real_client_hello():
    """The SNI host name is parsed out of a ClientHello produced by a real TLS stack."""
    reader = asyncio.StreamReader()
    reader.feed_data(_client_hello("api.anthropic.com"))
    assert server_name(await read_client_hello(reader)) == "api.anthropic.com"


async def test_non_tls_stream_yields_no_hello():
    """A cleartext request after CONNECT is recognised as not TLS."""
    reader = asyncio.StreamReader()
    reader.feed_data(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert await read_client_hello(reader) == b""


def test_summary_counts_per_host():
    """Decisions are counted per host:port, allowed and denied apart, with bytes."""
    from sandbox.base import EgressDecision
    from sandbox.egress import summarize
    decisions = [EgressDecision("api.openai.com", 443, True, "allowed", bytes_up=10, bytes_down=90),
                 EgressDecision("api.openai.com", 443, True, "allowed", bytes_up=5, bytes_down=5),
                 EgressDecision("chatgpt.com", 443, False, "blocked-by-allowlist")]
    assert summarize(decisions) == {"api.openai.com:443": {"allowed": 2, "denied": 0, "bytes": 110},
                                    "chatgpt.com:443": {"allowed": 0, "denied": 1, "bytes": 0}}


async def test_silent_tunnel_closed_after_idle_timeout():
    """A tunnel with no bytes either way for the idle timeout is closed by the proxy."""
    from sandbox.egress import EgressProxy

    async def silent(reader, writer):
        await reader.read()  # never answers; returns when the proxy hangs up

    upstream = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = upstream.sockets[0].getsockname()[1]
    decisions = []
    proxy = EgressProxy(Policy.build([], gateways=[f"localhost:{port}"]), decisions)
    proxy.idle_timeout_s = 0.2
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    reader, writer = await asyncio.open_connection(*server.sockets[0].getsockname()[:2])
    writer.write(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode() + _client_hello("localhost"))
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    assert await asyncio.wait_for(reader.read(), 30) == b""  # EOF: the proxy hung up
    assert decisions[0].allowed and decisions[0].bytes_up > 0
    writer.close()
    server.close()
    upstream.close()
