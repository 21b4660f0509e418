"""One Retry-After parser (bot/retry.py:retry_after_s) for GitHub's answers and the providers':
milliseconds, seconds or an HTTP date."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http import HTTPStatus

from gidgethub import BadRequest

from bot.github.client import backoff_delay
from bot.relay import retry as relay_retry
from bot.retry import retry_after_s

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_retry_after_in_seconds_is_read():
    assert retry_after_s({"retry-after": "7"}) == 7.0


def test_retry_after_in_fractional_seconds_is_read():
    assert retry_after_s({"retry-after": "1.5"}) == 1.5


def test_retry_after_as_an_http_date_is_the_seconds_until_it():
    assert retry_after_s({"retry-after": format_datetime(NOW + timedelta(seconds=20), usegmt=True)}, NOW) == 20


def test_retry_after_as_an_http_date_already_past_is_no_wait():
    assert retry_after_s({"retry-after": format_datetime(NOW - timedelta(seconds=20), usegmt=True)}, NOW) == 0


def test_retry_after_ms_wins_over_retry_after():
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5


def test_header_names_are_matched_whatever_their_case():
    assert retry_after_s({"Retry-After": "3"}) == 3.0


def test_retry_after_that_is_neither_a_number_nor_a_date_is_not_a_wait():
    assert retry_after_s({"retry-after": "soon"}) is None


def test_a_negative_retry_after_is_no_wait():
    assert retry_after_s({"retry-after": "-5"}) == 0


def test_no_retry_after_is_not_a_wait():
    assert retry_after_s({}) is None


def test_github_client_waits_a_retry_after_given_as_an_http_date():
    when = datetime.now(UTC) + timedelta(hours=1)
    limited = BadRequest(HTTPStatus.TOO_MANY_REQUESTS,
                         headers={"retry-after": format_datetime(when, usegmt=True)})
    delay = backoff_delay(limited, attempt=1)
    assert delay is not None and 3000 < delay <= 3600


def test_the_relay_reads_retry_after_with_the_same_parser():
    assert relay_retry.asked_wait_s is retry_after_s
