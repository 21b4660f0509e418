"""compose.yaml: PostgreSQL, one intake, two workers, secrets from files, data dirs on volumes."""
from __future__ import annotations

from typing import Any

from bot import config
from bot.workspace.repo_config_model import RepoLimits
from tests.deploy.compose_file import bytes_of, load, seconds, with_defaults

DATA_DIR = "/var/lib/bot/data"  # BOT_DATA_DIR in the Containerfile
SECRET_VARIABLES = {v.name for v in config.VARIABLES if v.secret}
NEEDED = {"BOT_DATABASE_URL", "BOT_SECRET_KEY", "GITHUB_WEBHOOK_SECRET"}


def bots() -> dict[str, dict[str, Any]]:
    return {name: s for name, s in load()["services"].items() if name != "postgres"}


def role(service: dict[str, Any]) -> str:
    return str(service["command"][0])


def test_postgresql_runs_from_a_debian_image_named_by_a_variable() -> None:
    image = load()["services"]["postgres"]["image"]
    assert image.startswith("${POSTGRES_IMAGE:-")
    assert with_defaults(image).split(":")[-1].endswith(("bookworm", "trixie"))


def test_there_is_one_intake_and_two_workers() -> None:
    roles = sorted(role(s) for s in bots().values())
    assert roles == ["serve", "worker", "worker"]
    intake = next(s for s in bots().values() if role(s) == "serve")
    assert intake["environment"]["BOT_WORKERS"] == "0"


def test_every_bot_service_gets_its_secrets_from_files() -> None:
    declared = load()["secrets"]
    assert all(set(entry) == {"file"} for entry in declared.values())
    for name, service in bots().items():
        targets = {s["target"] for s in service["secrets"]}
        assert NEEDED <= targets, name
        assert {s["source"] for s in service["secrets"]} <= set(declared), name


def test_no_secret_is_written_in_the_environment() -> None:
    for service in load()["services"].values():
        literal = {k for k, v in service.get("environment", {}).items() if k in SECRET_VARIABLES and v}
        assert literal == set()
        assert "POSTGRES_PASSWORD" not in service.get("environment", {})


def test_each_bot_service_keeps_its_data_dir_on_a_volume_of_its_own() -> None:
    named = set(load()["volumes"])
    sources = []
    for service in bots().values():
        mounts = [v.split(":") for v in service["volumes"]]
        sources += [source for source, target in mounts if target == DATA_DIR]
    assert len(sources) == len(bots()) == len(set(sources)) and set(sources) <= named


def test_postgresql_keeps_its_data_on_a_volume() -> None:
    assert "postgres-data:/var/lib/postgresql/data" in load()["services"]["postgres"]["volumes"]


def test_the_intake_is_health_checked_on_healthz_and_waits_for_a_healthy_database() -> None:
    intake = next(s for s in bots().values() if role(s) == "serve")
    assert any(part.endswith("/healthz") for part in intake["healthcheck"]["test"])
    assert "pg_isready" in load()["services"]["postgres"]["healthcheck"]["test"]
    for service in bots().values():
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_a_stopped_worker_has_longer_than_its_shutdown_grace() -> None:
    for service in bots().values():
        if role(service) == "worker":
            grace = float(service["environment"]["BOT_SHUTDOWN_GRACE"])
            assert seconds(service["stop_grace_period"]) >= grace + 10


def test_each_worker_is_capped_at_one_episodes_limits_and_runs_one_episode() -> None:
    """Tier 1 under the container's own cgroup (sandbox/own_cgroup.py): memory and pids at or below
    one episode's default limits, no swap past the memory cap, one episode at a time."""
    episode = RepoLimits()
    for name, service in bots().items():
        if role(service) != "worker":
            continue
        assert bytes_of(service["mem_limit"]) <= episode.memory_bytes, name
        assert service["memswap_limit"] == service["mem_limit"], name
        assert int(service["pids_limit"]) <= episode.pids, name
        assert service["environment"]["BOT_WORKERS"] == "1", name


def test_the_workers_get_no_cgroup_volume_and_no_cgroup_root() -> None:
    """Compose works as shipped: nothing of the host's cgroups to make or mount by hand."""
    for name, service in bots().items():
        assert not any("cgroup" in volume for volume in service.get("volumes", [])), name
        assert "BOT_CGROUP_ROOT" not in service["environment"], name
