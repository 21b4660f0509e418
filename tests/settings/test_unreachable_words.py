"""Pages say why GitHub or a provider could not be reached in words, never an exception's class name
(`(ConnectError)`): bot/settings/unreachable.py, a declared table of causes, anything else "the
connection failed"."""
from __future__ import annotations

import re
import socket

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.settings.unreachable import reason

CLASS_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+(?:Error|Exception|Timeout)\b")


def _caused(exc: httpx.HTTPError, cause: BaseException) -> httpx.HTTPError:
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(("exc", "words"), [
    (httpx.ConnectError("[Errno 111] Connection refused"), "the connection was refused"),
    (_caused(httpx.ConnectError("x"), ConnectionRefusedError(111, "refused")), "the connection was refused"),
    (httpx.ConnectError("[Errno -2] Name or service not known"), "its name does not resolve"),
    (_caused(httpx.ConnectError("x"), socket.gaierror(-3, "Temporary failure")), "its name does not resolve"),
    (httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"),
     "its TLS certificate was not accepted"),
    (httpx.ConnectTimeout("timed out"), "it did not answer in time"),
    (httpx.ReadTimeout("timed out"), "it did not answer in time"),
    (httpx.RemoteProtocolError("Server disconnected without sending a response."),
     "it closed the connection without an answer"),
    (httpx.ConnectError("something new"), "the connection failed"),
])
def test_each_cause_is_said_in_words(exc, words):
    assert reason(exc) == words


def test_the_app_check_says_a_refused_connection_in_words():
    import asyncio

    from bot.settings import app_check

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    found = asyncio.run(app_check._ask_github(f"http://127.0.0.1:{port}", "1", _pem()))
    assert "the connection was refused" in found.message and "ConnectError" not in found.message


def _pem() -> str:
    from tests.spine.helpers import app_key
    return app_key()[0]


@given(st.text(max_size=400))
def test_whatever_an_error_says_the_reason_is_a_sentence_of_the_table(text):
    said = reason(httpx.ConnectError(text))
    assert not CLASS_NAME.search(said) and len(said) < 80 and "\n" not in said
