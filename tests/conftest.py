"""Shared test set-up. Each test gets its own data dir; nothing reads the real environment's keys."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# the GitHub App's and the workflow token's variables; the agents' come from their adapters
GITHUB_VARIABLES = ("GITHUB_TOKEN", "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH",
                    "GITHUB_WEBHOOK_SECRET")


def scrubbed_variables() -> tuple[str, ...]:
    """Every variable that authenticates an agent, as its adapter declares it (the CLI's own, the
    operator's, the settings page's), and the GitHub App's."""
    from adapters import base

    agents: dict[str, None] = {}
    for name in base.names():
        adapter = base.get(name)
        kinds = [variable for kind in adapter.credential_kinds for variable in kind.env]
        agents.update(dict.fromkeys([*adapter.credential_env, *adapter.operator_variables(), *kinds]))
    return (*agents, *GITHUB_VARIABLES)


_SCRUBBED = scrubbed_variables()


@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BOT_DATA_DIR", str(tmp_path / "data"))
    yield


@pytest.fixture(autouse=True)
def sse_streams_open(monkeypatch):
    """Each test starts with sse_starlette's process-wide shutdown flag down. An app's lifespan raises
    it when that app stops (its bridges' streams close after the jobs' grace), as it should in a
    service; in one test process, it would end every later SSE stream at once (a bridge's MCP calls,
    the run page's events)."""
    from sse_starlette.sse import AppStatus

    monkeypatch.setattr(AppStatus, "should_exit", False)


@pytest.fixture(autouse=True)
def retry_waits(monkeypatch) -> list[float]:
    """No retry in the suite waits for real; the waits the policy asked for are recorded."""
    from bot import retry

    asked: list[float] = []

    async def no_wait(seconds: float) -> None:
        asked.append(seconds)

    monkeypatch.setattr(retry, "sleep", no_wait)
    return asked


@pytest.fixture(scope="session")
def pg_cluster():
    """A throwaway PostgreSQL server for the session (tests/store/postgres.py), started on first use."""
    from tests.store.postgres import Cluster, bin_dir

    bindir = bin_dir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (make test installs Debian's postgresql)")
    cluster = Cluster(bindir)
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(params=["developer", "deployment"])
def profile(request, monkeypatch):
    """Each service scenario (marked `scenario`, tests/spine/service.py) runs twice: under a
    developer's defaults and under the configuration a real deployment has. The test process
    opens the same database as the service (tests.entry_settings.database())."""
    from tests.spine import service

    chosen = service.DEVELOPER
    if request.param == "deployment":
        chosen = service.Profile("deployment", request.getfixturevalue("pg_cluster").new_database())
        monkeypatch.setenv("BOT_DATABASE_URL", chosen.database_url)
        monkeypatch.setenv("BOT_SECRET_KEY", service.SHARED_KEY)
    service.use_profile(chosen)
    yield chosen
    service.use_profile(service.DEVELOPER)


def have(tool: str) -> bool:
    return shutil.which(tool) is not None


def is_root() -> bool:
    return os.geteuid() == 0


@pytest.fixture(autouse=True)
def github_conformance():
    """Every exchange with a fake GitHub made during the test is as GitHub's REST description says."""
    from tests.fakes import github

    made_before = len(github.CREATED)
    yield
    fakes = github.CREATED[made_before:]
    del github.CREATED[made_before:]
    problems = [problem for fake in fakes for problem in fake.conformance_errors]
    assert not problems, "the fake GitHub's traffic is off GitHub's REST description:\n" + "\n".join(
        sorted(set(problems)))


PROJECT = Path(__file__).resolve().parent.parent
_OWNERS: dict[str, tuple[int, int]] = {}


def _owners() -> dict[str, tuple[int, int]]:
    """Who owns the checkout's own folders and top files (a sandbox run as root over a folder hands
    it to the sandbox's user: a test that let that folder be the checkout would give it away)."""
    found = {}
    for path in [PROJECT, *sorted(PROJECT.iterdir())]:
        if path.name.startswith(".") or path.is_symlink():
            continue
        info = path.stat()
        found[path.name or "."] = (info.st_uid, info.st_gid)
    return found


def pytest_sessionstart(session) -> None:  # type: ignore[no-untyped-def]
    _OWNERS.update(_owners())


def pytest_sessionfinish(session, exitstatus) -> None:  # type: ignore[no-untyped-def]
    changed = {name: (before, _owners().get(name)) for name, before in _OWNERS.items()
               if _owners().get(name, before) != before}
    if changed:
        print(f"\nthe suite changed the owner of the project's checkout: {changed}", file=sys.stderr)
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """What the GitHub conformance checks covered in this run (each test fails on its own problems)."""
    if "tests.fakes.github" not in sys.modules:  # no test used the fake: its 13 MB description stays unread
        return
    checker = sys.modules["tests.fakes.github"].SHARED_CHECKER
    if not checker.requests_checked:
        return
    terminalreporter.write_line(
        f"GitHub conformance: {len(checker.operations_seen)} documented operations, {checker.requests_checked} "
        f"requests checked, {checker.responses_validated} responses validated against GitHub's REST description")
