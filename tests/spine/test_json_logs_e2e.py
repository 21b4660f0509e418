"""With BOT_LOG_FORMAT=json, as every deployment sets it, each line `bot serve` writes is a JSON
object, uvicorn's own lines too (a log shipper drops the rest): uvicorn's default logging set-up,
which each server it builds would apply, is never installed."""
from __future__ import annotations

import json
import socket

import pytest

from tests.spine.service import Service, make_remote, scenario, seeded_github, service_env

pytestmark = pytest.mark.e2e


@scenario
def test_uvicorns_own_warning_is_a_json_line(tmp_path):
    gh = seeded_github()
    service = Service(service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_LOG_FORMAT="json"),
                      tmp_path / "serve.log").start()
    try:
        with socket.create_connection(("127.0.0.1", service.port)) as sock:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")  # uvicorn answers 400 and warns "Invalid HTTP request received."
            sock.recv(1024)
    finally:
        service.stop()
        gh.stop()
    lines = service.log_path.read_text().splitlines()
    assert not service.not_json_lines()
    assert any("Invalid HTTP request" in json.loads(line).get("message", "") for line in lines), lines
