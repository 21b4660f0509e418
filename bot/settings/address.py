"""The service's own address, and which Host a request may name: `BOT_PUBLIC_URL`, else the address
the service listens on. Never a request header: a page that rebinds its DNS name to this machine
sends its own name as Host, and no URL this service gives out may follow it."""
from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from bot.config import Settings

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
_WILDCARD = frozenset({"", "0.0.0.0", "::"})
_DEFAULT_PORT = {"http": 80, "https": 443}


def listening_base(host: str, port: int) -> str:
    """The URL of a listening address; the wildcard one is opened as the loopback address."""
    host = "127.0.0.1" if host in _WILDCARD else host
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}" + ("" if port == 80 else f":{port}")


def own_base(settings: Settings, server: Sequence | None) -> str:
    """The settings' BOT_PUBLIC_URL, else the address of the socket the request came in on (ASGI's
    `server`), else the settings' BOT_HOST and BOT_PORT."""
    public = settings.text("BOT_PUBLIC_URL")
    if public:
        return public.rstrip("/")
    if server:
        return listening_base(str(server[0]), _port(server))
    return listening_base(settings.word("BOT_HOST"), settings.whole("BOT_PORT"))


def host_allowed(settings: Settings, host: str, server: Sequence | None) -> bool:
    """BOT_PUBLIC_URL's host and port; while it is unset, a loopback name with the served port."""
    public = settings.text("BOT_PUBLIC_URL")
    if public:
        url = urlsplit(public)
        named = _split(host, url.scheme)
        return named is not None and named == _split(url.netloc, url.scheme)
    named = _split(host, "http")
    served_port = _port(server) if server else settings.whole("BOT_PORT")
    return named is not None and named[0] in LOOPBACK and named[1] == served_port


def allowed_hosts(settings: Settings, server: Sequence | None) -> str:
    """The hosts `host_allowed` accepts, in words, for the log line of a refusal."""
    public = settings.text("BOT_PUBLIC_URL")
    if public:
        url = urlsplit(public)
        return f"{url.netloc} only (the host of BOT_PUBLIC_URL)"
    served_port = _port(server) if server else settings.whole("BOT_PORT")
    return f"localhost, 127.0.0.1 or [::1] on port {served_port} only (BOT_PUBLIC_URL is not set)"


def _port(server: Sequence) -> int:
    """The served port; an ASGI server may leave it out for the scheme's default."""
    return 80 if server[1] is None else int(server[1])


def _split(netloc: str, scheme: str) -> tuple[str, int] | None:
    """(lower-case name, port) of a Host value, its port the scheme's default when absent; None when
    it is not a bare host[:port]."""
    if not netloc or any(c in netloc for c in "/?#@\\ \t") or netloc != netloc.strip():
        return None
    try:
        parts = urlsplit(f"//{netloc}")
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return parts.hostname.lower(), port if port is not None else _DEFAULT_PORT.get(scheme, 80)
