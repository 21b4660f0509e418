"""The egress proxy: CONNECT only, name allowlist, public answers only, pinned, SNI-checked.

One proxy per sandbox run, served in the launcher on the listener injected at
127.0.0.1:3128 inside the sandbox, so every connection is attributed to its run.
Each decision is appended to the run's `egress` list and written as one JSON line.
"""
from __future__ import annotations

import asyncio
import ipaddress
import json
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from sandbox import special_addresses
from sandbox.base import EgressDecision, Limits
from sandbox.inject import ConnectionCap, pipe, tcp_relay

HEAD_LIMIT = 8192
HEAD_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 10.0
IDLE_TIMEOUT_S = 300.0  # a tunnel silent in both directions this long is closed
DEFAULT_PORT = 443
BAD_NAME_CHARS = set("/\\@% \t\r\n")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
PROXY_NAME = "egress-proxy"  # the host of decisions about the proxy itself (over its cap)
OVER_CAP = "connection-limit"
# Denials recorded per run; past this they are counted in `unrecorded` (a run refused without
# end would otherwise grow the bot's memory and the egress log without bound).
MAX_RECORDED = 10_000

Resolver = Callable[[str, int], Awaitable[list[str]]]


def normalize_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host or BAD_NAME_CHARS & set(host):
        raise ValueError(f"invalid host {host!r}")
    if _ip(host) is None:
        host = host.encode("idna").decode("ascii")
    return host


@overload
def split_host_port(text: str) -> tuple[str, int]: ...
@overload
def split_host_port(text: str, default_port: int | None) -> tuple[str, int | None]: ...
def split_host_port(text: str, default_port: int | None = DEFAULT_PORT) -> tuple[str, int | None]:
    """'h', 'h:443', '[::1]:443', '::1' -> (host, port)."""
    text = text.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else default_port
    if text.count(":") == 1:
        host, port = text.split(":")
        return host, int(port)
    return text, default_port


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_public(address: str) -> bool:
    """A public unicast destination per the IANA special-purpose registries (never Python's
    flags); IPv4-mapped and NAT64/6to4/Teredo carrying a non-public IPv4 address never count."""
    return special_addresses.is_public(address)


@dataclass
class Policy:
    """Allowed names (exact or '.suffix', optional port) and operator gateways (exact host:port)."""

    names: dict[str, set[int]] = field(default_factory=dict)
    suffixes: dict[str, set[int]] = field(default_factory=dict)
    gateways: set[tuple[str, int]] = field(default_factory=set)

    @classmethod
    def build(cls, allowed: Iterable[str], gateways: Iterable[str] = ()) -> Policy:
        policy = cls()
        for entry in allowed:
            host, port = split_host_port(entry)
            host = host.strip()
            if host.startswith("*."):
                host = host[1:]
            table = policy.suffixes if host.startswith(".") else policy.names
            key = "." + normalize_host(host[1:]) if host.startswith(".") else normalize_host(host)
            table.setdefault(key, set()).add(port)
        for entry in gateways:
            host, gateway_port = split_host_port(entry, default_port=None)
            if gateway_port is None:
                raise ValueError(f"gateway {entry!r} needs an explicit port")
            policy.gateways.add((normalize_host(host), gateway_port))
        return policy

    def check(self, host: str, port: int) -> tuple[bool, str, bool]:
        """(allowed, reason, private_ok) before any DNS lookup."""
        if (host, port) in self.gateways:
            return True, "operator-gateway", True
        ports = self.names.get(host)
        if ports is None and _ip(host) is not None:
            return False, "ip-literal-not-allowed", False
        if ports is None:
            ports = next((p for s, p in self.suffixes.items() if host.endswith(s)), None)
        if ports is None:
            return False, "blocked-by-allowlist", False
        if port not in ports:
            return False, "port-not-allowed", False
        return True, "allowlisted", False


async def system_resolve(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))  # already a str: the type says str | int


class EgressProxy:
    """Serves CONNECT requests for one run; `handle` is the asyncio connection callback.

    At most `max_connections` are served at once, and as many again by each relay made with
    `relay()`; a connection past the cap is refused on arrival and recorded."""

    def __init__(self, policy: Policy, decisions: list[EgressDecision],
                 log_path: Path | None = None, resolve: Resolver = system_resolve,
                 max_connections: int = Limits.connections, max_recorded: int = MAX_RECORDED):
        self.policy = policy
        self.decisions = decisions
        self.log_path = log_path
        self.resolve = resolve
        self.idle_timeout_s = IDLE_TIMEOUT_S
        self.max_connections = max_connections
        self.max_recorded = max_recorded
        self.unrecorded: dict[str, int] = {}  # reason -> denials past max_recorded
        self._cap = ConnectionCap(max_connections, self._refuse_over_cap)
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)

    def record(self, decision: EgressDecision) -> EgressDecision:
        if not decision.allowed and len(self.decisions) >= self.max_recorded:
            if not self.unrecorded:
                self._write(EgressDecision(PROXY_NAME, 0, False, "decision-record-full", time=time.time()))
            self.unrecorded[decision.reason] = self.unrecorded.get(decision.reason, 0) + 1
            return decision
        self._write(decision)
        return decision

    def _write(self, decision: EgressDecision) -> None:
        self.decisions.append(decision)
        if self.log_path is not None:
            with self.log_path.open("a") as log:
                log.write(json.dumps(decision.as_dict(), sort_keys=True) + "\n")

    def relay(self, host: str, port: int) -> Callable[..., Awaitable[None]]:
        """A relay to host:port (the bridge, a loopback gateway) under the same cap, its own
        count: a connection past it is closed unserved and recorded against host:port."""
        def refuse(writer: asyncio.StreamWriter) -> None:
            self.record(EgressDecision(host, port, False, OVER_CAP, time=time.time()))
        return ConnectionCap(self.max_connections, refuse).wrap(tcp_relay(host, port))

    def _refuse_over_cap(self, writer: asyncio.StreamWriter) -> None:
        self.record(EgressDecision(PROXY_NAME, 0, False, OVER_CAP, time=time.time()))
        writer.write(_reply_bytes(503, "Service Unavailable", OVER_CAP))

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await self._cap.serve(self._handle, reader, writer)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._serve(reader, writer)
        except (TimeoutError, ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        method, _, target = head.split(b"\r\n", 1)[0].decode("latin-1").partition(" ")
        target = target.rsplit(" ", 1)[0]
        if method.upper() != "CONNECT":
            self.record(EgressDecision(target[:200], 0, False, "only-connect-allowed", time=time.time()))
            return await _reply(writer, 405, "Method Not Allowed", "only-connect-allowed")
        try:
            host, port = split_host_port(target)
            host = normalize_host(host)
        except ValueError:
            self.record(EgressDecision(target[:200], 0, False, "invalid-target", time=time.time()))
            return await _reply(writer, 400, "Bad Request", "invalid-target")
        addresses, refused = await self._vet(host, port)
        if addresses is None:
            return await _reply(writer, 403, "Forbidden", refused)
        await _reply(writer, 200, "Connection Established")
        hello = await asyncio.wait_for(read_client_hello(reader), HEAD_TIMEOUT_S)
        sni = server_name(hello) if hello else None
        if not _sni_matches(host, sni):
            self.record(EgressDecision(host, port, False, "sni-mismatch-or-not-tls", sni=sni,
                                       time=time.time()))
            return
        await self._tunnel(host, port, addresses, sni, hello, reader, writer)

    async def _vet(self, host: str, port: int) -> tuple[list[str] | None, str]:
        """The vetted addresses, or None and the recorded reason for refusing."""
        allowed, reason, private_ok = self.policy.check(host, port)
        if not allowed:
            return self._deny(host, port, reason)
        try:
            addresses = [host] if _ip(host) else await self.resolve(host, port)
        except OSError:
            addresses = []
        if not addresses:
            return self._deny(host, port, "dns-failure")
        private = [a for a in addresses if not is_public(a)]
        if private and not private_ok:
            return self._deny(host, port, "resolves-to-non-public:" + ",".join(private))
        return addresses, reason

    def _deny(self, host: str, port: int, reason: str) -> tuple[None, str]:
        self.record(EgressDecision(host, port, False, reason, time=time.time()))
        return None, reason

    async def _tunnel(self, host: str, port: int, addresses: list[str], sni: str | None, hello: bytes,
                      reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for address in addresses:  # the vetted answers only: never a second lookup
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection(address, port), CONNECT_TIMEOUT_S)
                break
            except (TimeoutError, OSError):
                continue
        else:
            self.record(EgressDecision(host, port, False, "upstream-connect-failed", sni=sni,
                                       time=time.time()))
            return
        decision = self.record(EgressDecision(host, port, True, "allowed", address=address, sni=sni,
                                              time=time.time()))
        up_writer.write(hello)
        decision.bytes_up += len(hello)
        last_activity = [time.monotonic()]

        def count_up(n: int) -> None:
            decision.bytes_up += n
            last_activity[0] = time.monotonic()

        def count_down(n: int) -> None:
            decision.bytes_down += n
            last_activity[0] = time.monotonic()

        relay = asyncio.gather(pipe(reader, up_writer, count_up), pipe(up_reader, writer, count_down))
        try:
            while not relay.done():
                idle = time.monotonic() - last_activity[0]
                await asyncio.wait([relay], timeout=max(self.idle_timeout_s - idle, 0.01))
                if not relay.done() and time.monotonic() - last_activity[0] >= self.idle_timeout_s:
                    relay.cancel()  # silent both ways for too long: drop the tunnel
        finally:
            up_writer.close()
            relay.cancel()


def _sni_matches(host: str, sni: str | None) -> bool:
    if sni is None:  # clients send no SNI for IP literals (RFC 6066); names must carry one
        return _ip(host) is not None
    try:
        return normalize_host(sni) == host
    except ValueError:
        return False


async def _reply(writer: asyncio.StreamWriter, status: int, text: str, reason: str = "") -> None:
    writer.write(_reply_bytes(status, text, reason))
    await writer.drain()


def _reply_bytes(status: int, text: str, reason: str = "") -> bytes:
    extra = f"X-Proxy-Error: {reason}\r\nContent-Length: 0\r\nConnection: close\r\n" if reason else ""
    return f"HTTP/1.1 {status} {text}\r\n{extra}\r\n".encode()


async def read_client_hello(reader: asyncio.StreamReader) -> bytes:
    """The raw TLS records carrying the ClientHello, or b'' when the stream is not TLS."""
    records, handshake = b"", b""
    while len(records) < 65536:
        header = await reader.readexactly(5)
        if header[0] != 0x16:
            return b""
        body = await reader.readexactly(int.from_bytes(header[3:5], "big"))
        records += header + body
        handshake += body
        if len(handshake) >= 4 and len(handshake) >= 4 + int.from_bytes(handshake[1:4], "big"):
            return records if handshake[0] == 0x01 else b""
    return b""


def server_name(records: bytes) -> str | None:
    """The SNI host name in a ClientHello (as returned by read_client_hello)."""
    hs, pos = b"", 0
    while pos + 5 <= len(records):
        length = int.from_bytes(records[pos + 3:pos + 5], "big")
        hs += records[pos + 5:pos + 5 + length]
        pos += 5 + length
    try:
        p = 4 + 2 + 32
        p += 1 + hs[p]
        p += 2 + int.from_bytes(hs[p:p + 2], "big")
        p += 1 + hs[p]
        end = p + 2 + int.from_bytes(hs[p:p + 2], "big")
        p += 2
        while p + 4 <= end:
            ext_type, ext_len = int.from_bytes(hs[p:p + 2], "big"), int.from_bytes(hs[p + 2:p + 4], "big")
            if ext_type == 0:
                name_len = int.from_bytes(hs[p + 7:p + 9], "big")
                return hs[p + 9:p + 9 + name_len].decode("ascii")
            p += 4 + ext_len
    except (IndexError, UnicodeDecodeError):
        return None
    return None


def summarize(decisions: Iterable[EgressDecision]) -> dict[str, dict[str, int]]:
    """Per host:port, how many connections were allowed and denied (for the provenance block)."""
    counts: dict[str, dict[str, int]] = {}
    for decision in decisions:
        key = f"{decision.host}:{decision.port}" if decision.port else decision.host
        entry = counts.setdefault(key, {"allowed": 0, "denied": 0, "bytes": 0})
        entry["allowed" if decision.allowed else "denied"] += 1
        entry["bytes"] += decision.bytes_up + decision.bytes_down
    return counts
