"""Escape suite, network: the only way out is the CONNECT proxy, and it says no.

Every address used is either loopback or inside the sandbox's own empty network namespace.
"""
from __future__ import annotations

import pytest

from sandbox.tier1 import Tier1Spawner
from tests.entry_settings import current

pytestmark = pytest.mark.sandbox

PROXIED_CURL = "curl -sS -o /dev/null -w '%{http_code}' --max-time 10 -x http://127.0.0.1:3128 --noproxy ''"


async def test_direct_connection_by_ip_fails(run):
    """A direct TCP connection to an IP (no proxy) has no route out of the empty netns."""
    script = "import socket; socket.create_connection(('203.0.113.7', 443), 5)"
    ran = await run(f"python3 -c \"{script}\" 2>&1; exit 1")
    assert "OSError: [Errno 101] Network is unreachable" in ran.out
    assert ran.egress == []


async def test_direct_connection_by_name_fails(run):
    """A name cannot even be resolved inside: there is no DNS server in the netns."""
    ran = await run("curl -sS --noproxy '*' --max-time 5 https://example.com 2>&1; exit 1")
    assert "Could not resolve host: example.com" in ran.out
    assert ran.egress == []


async def test_non_allowlisted_name_denied_by_proxy(run):
    """CONNECT to a host outside the allowlist is answered 403 and recorded."""
    ran = await run(f"{PROXIED_CURL} https://example.com/ 2>&1", allowed_hosts=("api.openai.com",))
    assert "CONNECT tunnel failed, response 403" in ran.out
    assert ran.reasons() == ["blocked-by-allowlist"]
    assert ran.egress[0].host == "example.com" and not ran.egress[0].allowed


async def test_allowlisted_name_resolving_to_loopback_denied(run):
    """An allowlisted name whose answer is 127.0.0.1 is refused (no SSRF into the host)."""
    ran = await run(f"{PROXIED_CURL} https://localhost/ 2>&1", allowed_hosts=("localhost",))
    assert "CONNECT tunnel failed, response 403" in ran.out
    assert ran.reasons()[0].startswith("resolves-to-non-public:")
    assert "127.0.0.1" in ran.reasons()[0]


@pytest.mark.parametrize("name,address", [("intranet.example.com", "10.0.0.1"),
                                          ("metadata.example.com", "169.254.169.254")],
                         ids=["private-10", "cloud-metadata"])
async def test_allowlisted_name_resolving_to_private_denied(run, name, address):
    """An allowlisted name that DNS answers with a private or link-local address is refused."""
    async def fake_dns(host: str, port: int) -> list[str]:  # no DNS server is reachable here
        return [address] if host == name else []

    ran = await run(f"{PROXIED_CURL} https://{name}/ 2>&1", spawner=Tier1Spawner(resolve=fake_dns, host=current().sandbox_host),
                    allowed_hosts=("." + name.split(".", 1)[1],))
    assert "CONNECT tunnel failed, response 403" in ran.out
    assert ran.reasons() == [f"resolves-to-non-public:{address}"]


async def test_ip_literal_not_listed_denied(run):
    """CONNECT to an IP literal that is not listed verbatim is refused."""
    ran = await run(f"{PROXIED_CURL} https://10.0.0.1/ 2>&1", allowed_hosts=(".example.com",))
    assert "CONNECT tunnel failed, response 403" in ran.out
    assert ran.reasons() == ["ip-literal-not-allowed"]


async def test_plain_http_through_proxy_refused(run):
    """Absolute-form plain HTTP through the proxy is answered 405: CONNECT only."""
    ran = await run(f"{PROXIED_CURL} http://api.openai.com/ 2>&1", allowed_hosts=("api.openai.com",))
    assert ran.out.startswith("405")
    assert ran.reasons() == ["only-connect-allowed"]


async def test_port_outside_allowlist_denied(run):
    """An allowlisted name on a port other than the allowed one is refused."""
    ran = await run(f"{PROXIED_CURL} https://api.openai.com:8443/ 2>&1",
                    allowed_hosts=("api.openai.com",))
    assert "CONNECT tunnel failed, response 403" in ran.out
    assert ran.reasons() == ["port-not-allowed"]


async def test_sni_must_match_connect_host(run, http_server, tls_files, config):
    """A TLS hello naming another server than the CONNECT host is cut off before any upstream."""
    port = await http_server(b"secret-upstream", tls=tls_files)
    script = (f"openssl s_client -proxy 127.0.0.1:3128 -connect localhost:{port} "
              f"-servername evil.example.com </dev/null 2>&1; exit 1")
    ran = await run(script, gateways=(f"localhost:{port}",))
    assert ran.reasons() == ["sni-mismatch-or-not-tls"]
    assert ran.egress[0].sni == "evil.example.com"
    assert "secret-upstream" not in ran.out


async def test_host_loopback_port_unreachable(run, http_server):
    """A service on the host's 127.0.0.1 is not reachable: the sandbox has its own loopback."""
    port = await http_server(b"host-only")
    ran = await run(f"curl -sS --max-time 5 http://127.0.0.1:{port}/ 2>&1; exit 1")
    assert "Failed to connect to 127.0.0.1" in ran.out
    assert "host-only" not in ran.out
