"""Reading a delivery saved from the "Recent deliveries" page: untrusted text, only GitHub's own
headers kept."""
from __future__ import annotations

import pytest

from bot.cli.replay_file import ReplayFileError, parse


def test_a_saved_signature_host_and_length_are_never_kept() -> None:
    saved = parse("Host: evil.example\nContent-Length: 1\nX-Hub-Signature-256: sha256=00\n"
                  "X-GitHub-Event: ping\n\n{}")
    assert saved.headers == {"x-github-event": "ping"}


def test_windows_line_ends_and_a_byte_order_mark_are_read() -> None:
    saved = parse("\ufeffX-GitHub-Event: issues\r\nX-GitHub-Delivery: abc\r\n\r\n{\"action\": \"opened\"}\r\n")
    assert (saved.event, saved.delivery_id, saved.body) == ("issues", "abc", b'{"action": "opened"}')


def test_a_header_value_that_is_not_printable_ascii_is_refused() -> None:
    with pytest.raises(ReplayFileError, match="line 1"):
        parse("X-GitHub-Event: ping\x1b[2J\n\n{}")


def test_a_payload_that_is_not_a_json_object_is_refused() -> None:
    with pytest.raises(ReplayFileError, match="not a JSON object"):
        parse("X-GitHub-Event: ping\n\n[1, 2]")
