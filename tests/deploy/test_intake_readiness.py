"""An intake replica (`bot serve` with BOT_WORKERS=0, workers elsewhere) is ready when its database
answers and GitHub accepts the App: behind a Kubernetes Service or a load balancer probing /readyz,
it must get traffic although it claims no jobs itself."""
from __future__ import annotations

from pathlib import Path

import httpx

from tests.spine.service import Service, make_remote, seeded_github, service_env


def test_an_intake_only_service_is_ready_without_workers_of_its_own(tmp_path: Path) -> None:
    gh = seeded_github()
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9", BOT_WORKERS="0")
    service = Service(env, tmp_path / "serve.log").start()
    try:
        answer = httpx.get(f"{service.url}/readyz", timeout=10)
    finally:
        service.stop()
        gh.stop()
    assert answer.status_code == 200, answer.text
