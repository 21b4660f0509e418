"""Why GitHub or a provider could not be reached, in the words of the person who must fix it: a
declared table of causes read from the failure (its text and the errors that caused it); anything
else is "the connection failed". Never an exception's class name on a page."""
from __future__ import annotations

import socket
import ssl

import httpx

FAILED = "the connection failed"
# (what the failure or its causes say, lower-cased) -> the words shown; the first that matches wins
_CAUSES = (
    ("certificate_verify_failed", "its TLS certificate was not accepted"),
    ("[ssl", "its TLS certificate was not accepted"),
    ("refused", "the connection was refused"),
    ("name or service not known", "its name does not resolve"),
    ("temporary failure in name resolution", "its name does not resolve"),
    ("nodename nor servname", "its name does not resolve"),
    ("network is unreachable", "the network is unreachable"),
    ("no route to host", "there is no route to it"),
)
_MAX_CHAIN = 8


def reason(exc: httpx.HTTPError) -> str:
    """One clause: "the connection was refused", "it did not answer in time", …"""
    if isinstance(exc, httpx.TimeoutException):
        return "it did not answer in time"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "it closed the connection without an answer"
    said = _said(exc)
    return next((words for needle, words in _CAUSES if needle in said), FAILED)


def _said(exc: BaseException) -> str:
    """The failure's text and its causes', with the kinds of cause that carry no telling text."""
    parts: list[str] = []
    error: BaseException | None = exc
    for _ in range(_MAX_CHAIN):
        if error is None:
            break
        parts.append(str(error))
        if isinstance(error, ssl.SSLError):
            parts.append("[ssl")
        elif isinstance(error, ConnectionRefusedError):
            parts.append("refused")
        elif isinstance(error, socket.gaierror):
            parts.append("name or service not known")
        error = error.__cause__ or error.__context__
    return " ".join(parts).lower()
