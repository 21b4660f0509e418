"""Listener injection: create loopback listeners inside a sandbox's network namespace.

bwrap reports the sandbox child's pid on --info-fd and waits on --block-fd. A
forked single-threaded helper joins the owner user namespace of the child's netns
(bwrap nests user namespaces; only the owner grants CAP_NET_BIND in that netns),
then the netns, binds 127.0.0.1:PORT listeners there and sends their fds back over
SCM_RIGHTS. The launcher accepts on them outside the sandbox and relays, so no
socat, bind-mounted socket or AF_UNIX is needed inside.
"""
from __future__ import annotations

import asyncio
import ctypes
import errno
import fcntl
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
NS_GET_USERNS = 0xB701  # _IO(0xb7, 0x1)
RELAY_CHUNK = 1 << 16

_libc = ctypes.CDLL(None, use_errno=True)


class InjectionFailed(RuntimeError):
    pass


def _setns(fd: int, nstype: int) -> None:
    if _libc.setns(fd, nstype) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _enter_netns(child_pid: int) -> None:
    net_fd = os.open(f"/proc/{child_pid}/ns/net", os.O_RDONLY)
    try:
        _setns(net_fd, CLONE_NEWNET)
        return
    except PermissionError:
        pass  # not privileged over the netns here: join its owning userns first
    owner_fd = fcntl.ioctl(net_fd, NS_GET_USERNS)
    _setns(owner_fd, CLONE_NEWUSER)
    _setns(net_fd, CLONE_NEWNET)


def _bind_listeners(ports: list[int], wait_s: float = 5.0) -> list[socket.socket]:
    listeners = []
    for port in ports:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        _bind_when_loopback_up(sock, port, time.monotonic() + wait_s)
        sock.listen(128)
        listeners.append(sock)
    return listeners


def _bind_when_loopback_up(sock: socket.socket, port: int, deadline: float) -> None:
    """bwrap reports the child pid while the child may still be bringing `lo` up."""
    while True:
        try:
            sock.bind(("127.0.0.1", port))
            return
        except OSError as exc:
            if exc.errno != errno.EADDRNOTAVAIL or time.monotonic() > deadline:
                raise
            time.sleep(0.0002)


def inject_listeners(child_pid: int, ports: list[int]) -> list[socket.socket]:
    """Listening sockets bound to 127.0.0.1:port inside child_pid's network namespace."""
    if not ports:
        return []
    try:
        return _inject_from_thread(child_pid, ports)
    except PermissionError:
        return _inject_from_fork(child_pid, ports)


def _inject_from_thread(child_pid: int, ports: list[int]) -> list[socket.socket]:
    """Fast path when we already hold CAP_SYS_ADMIN over the netns (the bot runs as root).

    setns(CLONE_NEWNET) switches only the calling thread, so a throwaway thread enters the
    netns, binds, and is discarded; the rest of the process never changes namespace.
    """
    result: dict = {}

    def work() -> None:
        try:
            own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
            net = os.open(f"/proc/{child_pid}/ns/net", os.O_RDONLY)
            try:
                _setns(net, CLONE_NEWNET)
                try:
                    result["sockets"] = _bind_listeners(ports)
                finally:
                    _setns(own, CLONE_NEWNET)
            finally:
                os.close(own)
                os.close(net)
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=work, name="sandbox-inject", daemon=True)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["sockets"]


def _inject_from_fork(child_pid: int, ports: list[int]) -> list[socket.socket]:
    """Unprivileged path: joining the owner user namespace needs a single-threaded process."""
    parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    pid = os.fork()
    if pid == 0:  # helper: touch nothing but syscalls, then _exit
        code = 0
        try:
            parent_end.close()
            _enter_netns(child_pid)
            listeners = _bind_listeners(ports)
            socket.send_fds(child_end, [b"ok"], [s.fileno() for s in listeners])
        except BaseException as exc:  # report, never return into the parent's code
            try:
                child_end.send(f"err:{exc}".encode()[:512])
            finally:
                code = 1
        os._exit(code)
    child_end.close()
    try:
        msg, fds, _, _ = socket.recv_fds(parent_end, 1024, len(ports))
    finally:
        parent_end.close()
        os.waitpid(pid, 0)
    if msg != b"ok" or len(fds) != len(ports):
        for fd in fds:
            os.close(fd)
        raise InjectionFailed(msg.decode("utf-8", "replace").removeprefix("err:") or "no reply")
    return [socket.socket(fileno=fd) for fd in fds]


class ConnectionCap:
    """At most `limit` connections of one listener served at once; one more arriving is handed to
    `refuse` (which answers and records why, without waiting on the peer) and closed at once.
    However many connections a run opens, the bot holds at most `limit` of them per listener,
    so its descriptors stay available to every other run and to the service itself."""

    def __init__(self, limit: int, refuse: Callable[[asyncio.StreamWriter], None]):
        self.limit, self.refuse, self.active = limit, refuse, 0

    def wrap(self, handler: Callable[..., Awaitable[None]]) -> Callable[..., Awaitable[None]]:
        async def capped(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await self.serve(handler, reader, writer)
        return capped

    async def serve(self, handler: Callable[..., Awaitable[None]], reader: asyncio.StreamReader,
                    writer: asyncio.StreamWriter) -> None:
        if self.active >= self.limit:
            try:
                self.refuse(writer)
            finally:
                writer.close()
            return
        self.active += 1
        try:
            await handler(reader, writer)
        finally:
            self.active -= 1


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
               count: Callable[[int], None] | None = None) -> None:
    try:
        while chunk := await reader.read(RELAY_CHUNK):
            writer.write(chunk)
            await writer.drain()
            if count:
                count(len(chunk))
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            if writer.can_write_eof():
                writer.write_eof()
        except (OSError, RuntimeError):
            writer.close()


async def splice(a: tuple[asyncio.StreamReader, asyncio.StreamWriter],
                 b: tuple[asyncio.StreamReader, asyncio.StreamWriter]) -> None:
    """Copy both ways until both sides are done, then close both."""
    try:
        await asyncio.gather(pipe(a[0], b[1]), pipe(b[0], a[1]))
    finally:
        for writer in (a[1], b[1]):
            writer.close()


def tcp_relay(host: str, port: int) -> Callable[..., Awaitable[None]]:
    """A connection handler that relays to host:port on the host's network."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
        except (TimeoutError, OSError):
            writer.close()
            return
        await splice((reader, writer), upstream)

    return handle


async def serve(listener: socket.socket, handler: Callable[..., Awaitable[None]],
                limit: int = RELAY_CHUNK) -> asyncio.AbstractServer:
    """Accept on an injected listener; `limit` caps readline/readuntil (the proxy's header cap)."""
    listener.setblocking(False)
    return await asyncio.start_server(handler, sock=listener, limit=limit)
