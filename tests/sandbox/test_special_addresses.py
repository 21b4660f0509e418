"""Egress address vetting against the IANA special-purpose registries, entry by entry.

The registries are transcribed here a second time, on purpose: this table is the spec the
module's own copy is checked against (https://www.iana.org/assignments/iana-ipv4-special-registry/,
https://www.iana.org/assignments/iana-ipv6-special-registry/, 2025-10). Each entry is checked
at its first and last address, so a nested block (192.0.0.9/32 inside 192.0.0.0/24) is decided
by the most specific entry.
"""
from __future__ import annotations

import ipaddress

import pytest

from sandbox import special_addresses
from sandbox.egress import is_public

# (block, globally reachable); None = N/A in the registry
IPV4_REGISTRY = [
    ("0.0.0.0/8", False), ("0.0.0.0/32", False), ("10.0.0.0/8", False), ("100.64.0.0/10", False),
    ("127.0.0.0/8", False), ("169.254.0.0/16", False), ("172.16.0.0/12", False),
    ("192.0.0.0/24", False), ("192.0.0.0/29", False), ("192.0.0.8/32", False),
    ("192.0.0.9/32", True), ("192.0.0.10/32", True), ("192.0.0.170/32", False),
    ("192.0.0.171/32", False), ("192.0.2.0/24", False), ("192.31.196.0/24", True),
    ("192.52.193.0/24", True), ("192.88.99.0/24", None), ("192.88.99.2/32", False),
    ("192.168.0.0/16", False), ("192.175.48.0/24", True), ("198.18.0.0/15", False),
    ("198.51.100.0/24", False), ("203.0.113.0/24", False), ("240.0.0.0/4", False),
    ("255.255.255.255/32", False),
]
IPV6_REGISTRY = [
    ("::1/128", False), ("::/128", False), ("::ffff:0:0/96", False), ("64:ff9b::/96", True),
    ("64:ff9b:1::/48", False), ("100::/64", False), ("100:0:0:1::/64", False),
    ("2001::/23", False), ("2001::/32", None), ("2001:1::1/128", True), ("2001:1::2/128", True),
    ("2001:1::3/128", True), ("2001:2::/48", False), ("2001:3::/32", True),
    ("2001:4:112::/48", True), ("2001:10::/28", None), ("2001:20::/28", True),
    ("2001:30::/28", True), ("2001:db8::/32", False), ("2002::/16", None),
    ("2620:4f:8000::/48", True), ("3fff::/20", False), ("5f00::/16", False), ("fc00::/7", False),
    ("fe80::/10", False),
]
# Blocks whose addresses carry IPv4 addresses: first and last carry 0.0.0.0 / 255.255.255.255.
EMBEDDING = {"64:ff9b::/96", "2002::/16", "2001::/32"}


def _ends(registry):
    for block, reachable in registry:
        network = ipaddress.ip_network(block)
        expected = False if block in EMBEDDING else reachable is True
        for address in sorted({network.network_address, network.broadcast_address}):  # one order in every worker
            yield pytest.param(str(address), expected, id=f"{block}@{address}")


@pytest.mark.parametrize("address, expected", list(_ends(IPV4_REGISTRY)))
def test_every_ipv4_registry_entry_decides_by_its_globally_reachable_column(address, expected):
    assert is_public(address) is expected


@pytest.mark.parametrize("address, expected", list(_ends(IPV6_REGISTRY)))
def test_every_ipv6_registry_entry_decides_by_its_globally_reachable_column(address, expected):
    assert is_public(address) is expected


@pytest.mark.parametrize("registry, table", [(IPV4_REGISTRY, special_addresses.IPV4_SPECIAL),
                                             (IPV6_REGISTRY, special_addresses.IPV6_SPECIAL)],
                         ids=["ipv4", "ipv6"])
def test_module_holds_every_registry_entry_and_its_column(registry, table):
    assert sorted((e.block, e.globally_reachable) for e in table) == sorted(registry)


@pytest.mark.parametrize("address", ["192.0.0.8", "fec0::1", "fec0::", "feff:ffff::1",
                                     "::10.0.0.1", "::8.8.8.8", "224.0.0.1", "239.255.255.250",
                                     "ff02::1", "ff0e::1", "4000::1", "1000::1"])
def test_outside_registries_non_unicast_and_reserved_space_not_public(address):
    """The review's two misses, deprecated site-local and IPv4-compatible IPv6, multicast,
    and IPv6 outside global unicast 2000::/3."""
    assert is_public(address) is False


@pytest.mark.parametrize("address", [
    "64:ff9b::a00:1", "64:ff9b::c0a8:101", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
    "2002:a00:1::1", "2002:c0a8:101::", "2002:7f00:1::1", "2002:c000:8::1",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo: client 192.0.2.45
    "2001:0:a00:1:0:0:f7f7:f7f7",  # Teredo: server 10.0.0.1, client 8.8.8.8
    "::ffff:10.0.0.1", "::ffff:8.8.8.8", "::ffff:127.0.0.1"])
def test_ipv6_carrying_a_non_public_ipv4_or_mapped_is_not_public(address):
    """NAT64, 6to4 and Teredo carrying a private, loopback or special IPv4 address are not
    public; an IPv4-mapped address never is (the registry says not globally reachable)."""
    assert is_public(address) is False


@pytest.mark.parametrize("address", [
    "8.8.8.8", "1.1.1.1", "9.9.9.9", "140.82.112.3", "151.101.1.69", "223.255.255.255",
    "192.0.0.9", "192.0.0.10", "192.31.196.1", "192.52.193.1", "192.175.48.6",
    "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:80b::200e", "2620:fe::fe",
    "2001:1::1", "2001:3::1", "2001:4:112::1", "2620:4f:8000::1",
    "64:ff9b::808:808", "2002:808:808::1", "2001:0:808:808:0:0:f7f7:f7f7"])
def test_known_public_addresses_are_public(address):
    """Real public hosts, the registry's globally reachable anycast blocks, and NAT64, 6to4 and
    Teredo carrying public IPv4 addresses."""
    assert is_public(address) is True


@pytest.mark.parametrize("address", ["fe80::1%eth0", "2606:4700:4700::1111%1", "", "8.8.8",
                                     "example.com", "8.8.8.8/32"])
def test_scoped_addresses_and_non_literals_are_not_public(address):
    assert is_public(address) is False
