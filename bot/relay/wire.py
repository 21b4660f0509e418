"""The relay's connections to the provider: httpx's own transport over streams that send a request in
one piece and read what has arrived in one piece.

httpcore writes a request's head and its body with two socket writes, so the provider wakes for the
head, waits, and wakes again for the body; and it reads at most 64 KiB at a time, so a 400 kB answer
that has already arrived crosses every HTTP layer of the relay seven times. Here a write waits until
the connection next reads (HTTP/1.1 reads the answer only once the request is written), and a read
takes up to READ_BYTES of what the socket holds: nothing waits for bytes that have not arrived.
"""
from __future__ import annotations

import ssl
import typing

import httpcore
import httpx

READ_BYTES = 256 << 10  # what asyncio's transport reads from the socket at once


class HeldWrites(httpcore.AsyncNetworkStream):
    """A connection whose writes leave together, when it next reads (or starts TLS)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream):
        self._stream = stream
        self._held: list[bytes] = []
        self._timeout: float | None = None

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._held.append(buffer)
            self._timeout = timeout

    async def flush(self) -> None:
        if self._held:
            data = b"".join(self._held)
            self._held.clear()
            await self._stream.write(data, self._timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self.flush()
        return await self._stream.read(max(max_bytes, READ_BYTES), timeout)

    async def aclose(self) -> None:
        self._held.clear()
        await self._stream.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        await self.flush()
        return HeldWrites(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> typing.Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.AsyncNetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: typing.Iterable[typing.Any] | None = None) -> httpcore.AsyncNetworkStream:
        return HeldWrites(await self._backend.connect_tcp(host, port, timeout, local_address, socket_options))

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: typing.Iterable[typing.Any] | None = None,
                                  ) -> httpcore.AsyncNetworkStream:
        return HeldWrites(await self._backend.connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class Transport(httpx.AsyncHTTPTransport):
    """httpx's transport (its request and error mapping) over a pool of HeldWrites connections."""

    def __init__(self, limits: httpx.Limits):
        context = httpx.create_ssl_context()
        super().__init__(verify=context, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=context, max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections, keepalive_expiry=limits.keepalive_expiry,
            network_backend=_Backend())
