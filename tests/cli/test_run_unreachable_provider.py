"""`bot run` against a provider that cannot be reached ends at once, in one line naming the host
that failed, never the relay's own loopback address, and says it once."""
from __future__ import annotations

import socket

import pytest

pytestmark = pytest.mark.e2e


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_closed_provider_port_is_named_once_and_the_run_ends(bot):
    port = _closed_port()
    done = bot.run("explain hello.py", env={"BOT_CODEX_BASE_URL": f"http://127.0.0.1:{port}/v1"})
    shown = done.stdout + done.stderr
    line = f"the model provider at 127.0.0.1:{port} could not be reached: connection refused"
    assert done.returncode != 0 and shown.count(line) == 1, shown
    assert "inference gateway" not in shown and "Traceback" not in shown
