"""A GitHub thread for a test whose job comes from GitHub but whose step never calls it (an answer
composed, a standing instruction): the real `Thread`, over a client no request is sent through."""
from __future__ import annotations

import httpx

from bot.github.client import RetryingAPI, Thread


def quiet_thread(repo: str = "o/r", number: int = 1, token: str | None = None) -> Thread:
    return Thread(RetryingAPI(httpx.AsyncClient(), oauth_token=token, base_url="https://github.invalid"),
                  repo, number)
