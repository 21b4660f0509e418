"""Is an IP address a public destination? Decided from the IANA registries, not the runtime.

Python's `ipaddress` flags (`is_global`, `is_private`) change between patch releases and
have missed blocks (192.0.0.8 and fec0::1 passed as public). This module holds both IANA
Special-Purpose Address Registries entry by entry, with their "Globally Reachable" column,
and decides by the most specific entry that holds the address:

- `True`: public. `False`: not public. `None` (the registry says N/A: a deprecated block,
  or a transition block whose reachability is that of the IPv4 address it carries): not
  public, except the IPv6 blocks that embed an IPv4 address (NAT64 64:ff9b::/96, 6to4,
  Teredo), which are public only when every embedded IPv4 address is.
- Outside the registries: IPv4 multicast (224.0.0.0/4) is never a unicast destination;
  IPv6 is public only inside global unicast 2000::/3 (the IPv6 Address Space Registry
  reserves everything else), so deprecated site-local fec0::/10, the deprecated
  IPv4-compatible ::/96 and multicast ff00::/8 are not public.

Registries as of 2025-10:
https://www.iana.org/assignments/iana-ipv4-special-registry/
https://www.iana.org/assignments/iana-ipv6-special-registry/
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Entry:
    block: str
    name: str
    rfc: str
    globally_reachable: bool | None  # None: the registry says N/A


IPV4_SPECIAL = (
    Entry("0.0.0.0/8", '"This network"', "RFC791", False),
    Entry("0.0.0.0/32", '"This host on this network"', "RFC1122", False),
    Entry("10.0.0.0/8", "Private-Use", "RFC1918", False),
    Entry("100.64.0.0/10", "Shared Address Space", "RFC6598", False),
    Entry("127.0.0.0/8", "Loopback", "RFC1122", False),
    Entry("169.254.0.0/16", "Link Local", "RFC3927", False),
    Entry("172.16.0.0/12", "Private-Use", "RFC1918", False),
    Entry("192.0.0.0/24", "IETF Protocol Assignments", "RFC6890", False),
    Entry("192.0.0.0/29", "IPv4 Service Continuity Prefix", "RFC7335", False),
    Entry("192.0.0.8/32", "IPv4 dummy address", "RFC7600", False),
    Entry("192.0.0.9/32", "Port Control Protocol Anycast", "RFC7723", True),
    Entry("192.0.0.10/32", "Traversal Using Relays around NAT Anycast", "RFC8155", True),
    Entry("192.0.0.170/32", "NAT64/DNS64 Discovery", "RFC8880", False),
    Entry("192.0.0.171/32", "NAT64/DNS64 Discovery", "RFC8880", False),
    Entry("192.0.2.0/24", "Documentation (TEST-NET-1)", "RFC5737", False),
    Entry("192.31.196.0/24", "AS112-v4", "RFC7535", True),
    Entry("192.52.193.0/24", "AMT", "RFC7450", True),
    Entry("192.88.99.0/24", "Deprecated (6to4 Relay Anycast)", "RFC7526", None),
    Entry("192.88.99.2/32", "6a44-relay anycast address", "RFC6751", False),
    Entry("192.168.0.0/16", "Private-Use", "RFC1918", False),
    Entry("192.175.48.0/24", "Direct Delegation AS112 Service", "RFC7534", True),
    Entry("198.18.0.0/15", "Benchmarking", "RFC2544", False),
    Entry("198.51.100.0/24", "Documentation (TEST-NET-2)", "RFC5737", False),
    Entry("203.0.113.0/24", "Documentation (TEST-NET-3)", "RFC5737", False),
    Entry("240.0.0.0/4", "Reserved", "RFC1112", False),
    Entry("255.255.255.255/32", "Limited Broadcast", "RFC8190", False),
)

IPV6_SPECIAL = (
    Entry("::1/128", "Loopback Address", "RFC4291", False),
    Entry("::/128", "Unspecified Address", "RFC4291", False),
    Entry("::ffff:0:0/96", "IPv4-mapped Address", "RFC4291", False),
    Entry("64:ff9b::/96", "IPv4-IPv6 Translat.", "RFC6052", True),
    Entry("64:ff9b:1::/48", "IPv4-IPv6 Translat.", "RFC8215", False),
    Entry("100::/64", "Discard-Only Address Block", "RFC6666", False),
    Entry("100:0:0:1::/64", "Dummy IPv6 Prefix", "RFC9780", False),
    Entry("2001::/23", "IETF Protocol Assignments", "RFC2928", False),
    Entry("2001::/32", "TEREDO", "RFC4380", None),
    Entry("2001:1::1/128", "Port Control Protocol Anycast", "RFC7723", True),
    Entry("2001:1::2/128", "Traversal Using Relays around NAT Anycast", "RFC8155", True),
    Entry("2001:1::3/128", "DNS-SD Service Registration Protocol Anycast", "RFC9665", True),
    Entry("2001:2::/48", "Benchmarking", "RFC5180", False),
    Entry("2001:3::/32", "AMT", "RFC7450", True),
    Entry("2001:4:112::/48", "AS112-v6", "RFC7535", True),
    Entry("2001:10::/28", "Deprecated (previously ORCHID)", "RFC4843", None),
    Entry("2001:20::/28", "ORCHIDv2", "RFC7343", True),
    Entry("2001:30::/28", "Drone Remote ID Protocol Entity Tags (DETs) Prefix", "RFC9374", True),
    Entry("2001:db8::/32", "Documentation", "RFC3849", False),
    Entry("2002::/16", "6to4", "RFC3056", None),
    Entry("2620:4f:8000::/48", "Direct Delegation AS112 Service", "RFC7534", True),
    Entry("3fff::/20", "Documentation", "RFC9637", False),
    Entry("5f00::/16", "Segment Routing (SRv6) SIDs", "RFC9602", False),
    Entry("fc00::/7", "Unique-Local", "RFC4193", False),
    Entry("fe80::/10", "Link-Local Unicast", "RFC4291", False),
)

# Blocks from the address-space registries, outside the special-purpose ones.
IPV4_OTHER = (Entry("224.0.0.0/4", "Multicast", "RFC5771", False),)
IPV6_OTHER = (
    Entry("::/96", "IPv4-compatible (deprecated)", "RFC4291", False),
    Entry("fec0::/10", "Site-local (deprecated)", "RFC3879", False),
    Entry("ff00::/8", "Multicast", "RFC4291", False),
)
IPV6_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")

_V4 = tuple((ipaddress.ip_network(e.block), e) for e in IPV4_SPECIAL + IPV4_OTHER)
_V6 = tuple((ipaddress.ip_network(e.block), e) for e in IPV6_SPECIAL + IPV6_OTHER)


def _embedded_v4(ip: ipaddress.IPv6Address, block: str) -> list[ipaddress.IPv4Address] | None:
    """The IPv4 addresses a transition address carries, for the blocks that carry one."""
    value = int(ip)
    if block == "64:ff9b::/96":  # RFC 6052: the last 32 bits
        return [ipaddress.IPv4Address(value & 0xFFFFFFFF)]
    if block == "2002::/16":  # RFC 3056: bits 16-47
        return [ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF)]
    if block == "2001::/32":  # RFC 4380: the server in bits 32-63, the client inverted at the end
        return [ipaddress.IPv4Address((value >> 64) & 0xFFFFFFFF),
                ipaddress.IPv4Address(~value & 0xFFFFFFFF)]
    return None


def entry_for(ip: Address) -> Entry | None:
    """The most specific registry entry holding `ip`, or None."""
    table = _V4 if ip.version == 4 else _V6
    best: tuple[ipaddress._BaseNetwork, Entry] | None = None
    for network, entry in table:
        if ip in network and (best is None or network.prefixlen > best[0].prefixlen):
            best = (network, entry)
    return best[1] if best else None


def is_public_ip(ip: Address) -> bool:
    entry = entry_for(ip)
    if entry is None:
        return ip.version == 4 or ip in IPV6_GLOBAL_UNICAST
    embedded = _embedded_v4(ip, entry.block) if ip.version == 6 else None
    if embedded is not None:
        return entry.globally_reachable is not False and all(is_public_ip(v4) for v4 in embedded)
    return entry.globally_reachable is True


def is_public(address: str) -> bool:
    """True only for an address literal that is a public unicast destination.

    A scoped IPv6 address (with a `%zone`) is link-bound, so never public; anything that is
    not an address literal is not public either.
    """
    if "%" in address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return is_public_ip(ip)
