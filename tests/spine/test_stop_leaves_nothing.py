"""The service's stops end every process of the run they stop, through a real `bot serve` and the
real Codex CLI: `@bot stop` and a shutdown (SIGTERM past its grace) while the agent's bridged `run`
command runs leave no sandbox of that run alive (found by its folder under the data dir)."""
from __future__ import annotations

import pytest

from tests.fakes.provider import call
from tests.leftovers import EXIT_DEADLINE_S, left_running
from tests.spine.service import REPO, Service, scenario
from tests.spine.test_crash_and_stop import in_the_run_tool, mention, world  # noqa: F401

pytestmark = pytest.mark.e2e
LONGER = f"sleep {int(EXIT_DEADLINE_S) * 4}"  # a command that ended by itself would prove nothing


def mid_run(world, tmp_path, **env: str) -> Service:  # noqa: F811
    gh, provider, base, services = world
    provider.script(call("run", {"command": LONGER}))
    services.append(Service(dict(base, **env), tmp_path / "serve.log").start())
    services[0].deliver(mention(gh, "@bot codex run the slow check", 1))
    gh.wait_for(in_the_run_tool, timeout=120)
    return services[0]


@scenario
def test_a_stop_mid_run_leaves_no_process_of_the_run(world, tmp_path):  # noqa: F811
    gh = world[0]
    service = mid_run(world, tmp_path)
    service.deliver(mention(gh, "@bot stop", 2))
    gh.wait_for(lambda: any("Stopped" in (c["body"] or "") for c in gh.comments(REPO, 1)), timeout=60)
    assert left_running(str(tmp_path / "data" / "runs")) == []


def test_a_shutdown_mid_run_leaves_no_process_of_the_run(world, tmp_path):  # noqa: F811
    mid_run(world, tmp_path, BOT_SHUTDOWN_GRACE="1").stop()
    assert left_running(str(tmp_path / "data")) == []
