"""deploy/kubernetes: every manifest, rendered as its kustomization says, is a valid object of the
Kubernetes API (kubernetes-validate's schemas, strict: no unknown field), and the deployment
properties the bot depends on hold."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from bot import config
from bot.workspace.repo_config_model import RepoLimits
from tests.deploy.kustomize import NotHandled, render

FOLDER = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
# user namespaces for pods are on by default from 1.33 (the worker's hostUsers: false)
KUBERNETES = "1.33.0"
SECRET_VARIABLES = {v.name for v in config.VARIABLES if v.secret}


@pytest.fixture(scope="module")
def objects() -> list[dict[str, Any]]:
    return render(FOLDER)


def of_kind(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {obj["metadata"]["name"]: obj for obj in objects if obj["kind"] == kind}


def pod(objects: list[dict[str, Any]], name: str) -> dict[str, Any]:
    spec: dict[str, Any] = of_kind(objects, "Deployment")[name]["spec"]["template"]["spec"]
    return spec


def containers(objects: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(deployment["spec"]["template"]["spec"], container)
            for deployment in of_kind(objects, "Deployment").values()
            for container in deployment["spec"]["template"]["spec"]["containers"]]


def test_every_rendered_object_is_valid_for_the_kubernetes_api(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        kubernetes_validate.validate(obj, KUBERNETES, strict=True)


def test_the_validator_refuses_a_misspelled_field(objects: list[dict[str, Any]]) -> None:
    broken = copy.deepcopy(of_kind(objects, "Deployment")["worker"])
    broken["spec"]["template"]["spec"]["terminationGracePeriod"] = 60
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBERNETES, strict=True)


def test_every_manifest_in_the_folder_is_rendered() -> None:
    listed = set(yaml.safe_load((FOLDER / "kustomization.yaml").read_text())["resources"])
    assert {p.name for p in FOLDER.glob("*.yaml")} - {"kustomization.yaml"} == listed


def test_every_object_gets_the_namespace_and_the_common_label(objects: list[dict[str, Any]]) -> None:
    for obj in objects:
        assert obj["metadata"]["labels"]["app.kubernetes.io/part-of"] == "github-agent-bot"
        if obj["kind"] != "Namespace":
            assert obj["metadata"]["namespace"] == "github-agent-bot"


def test_the_renderer_refuses_a_kustomize_feature_it_does_not_implement(tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\npatches:\n  - path: x.yaml\n")
    with pytest.raises(NotHandled, match="patches"):
        render(tmp_path)


def test_the_intake_runs_bot_serve_without_workers_and_the_workers_bot_worker(objects: list[dict[str, Any]]) -> None:
    intake, worker = pod(objects, "intake")["containers"][0], pod(objects, "worker")["containers"][0]
    assert intake["args"] == ["serve"] and {"name": "BOT_WORKERS", "value": "0"} in intake["env"]
    assert worker["args"] == ["worker"]
    deployments = of_kind(objects, "Deployment")
    assert deployments["intake"]["spec"]["replicas"] >= 2


def test_the_service_sends_traffic_to_the_intake_pods(objects: list[dict[str, Any]]) -> None:
    selector = of_kind(objects, "Service")["intake"]["spec"]["selector"]
    labels = of_kind(objects, "Deployment")["intake"]["spec"]["template"]["metadata"]["labels"]
    assert selector.items() <= labels.items()


def test_the_intakes_probes_are_readyz_and_healthz(objects: list[dict[str, Any]]) -> None:
    intake = pod(objects, "intake")["containers"][0]
    assert intake["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert intake["livenessProbe"]["httpGet"]["path"] == "/healthz"


def test_every_http_probe_asks_readyz_or_healthz(objects: list[dict[str, Any]]) -> None:
    for _, container in containers(objects):
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            if "httpGet" in container.get(probe, {}):
                assert container[probe]["httpGet"]["path"] in ("/readyz", "/healthz")


def test_the_worker_is_probed_on_its_own_heartbeat(objects: list[dict[str, Any]]) -> None:
    """A worker serves no HTTP: a hung one (its heartbeat stale in the database) is restarted, and a
    new one counts as ready in a rolling update once it heartbeats."""
    worker = pod(objects, "worker")["containers"][0]
    for probe in ("livenessProbe", "readinessProbe"):
        assert worker[probe]["exec"]["command"][-2:] == ["worker", "--check"], probe


def test_the_oauth_client_id_comes_from_the_configmap(objects: list[dict[str, Any]]) -> None:
    """The one ConfigMap the docs tell an operator to edit holds it; no container writes its own."""
    assert of_kind(objects, "ConfigMap")["github-agent-bot"]["data"]["GITHUB_CLIENT_ID"]
    for _, container in containers(objects):
        assert "GITHUB_CLIENT_ID" not in {v["name"] for v in container.get("env", [])}


def container_environment(objects: list[dict[str, Any]], name: str) -> dict[str, str]:
    """What the Deployment's container gets: its ConfigMaps (envFrom), then its own env, a secret
    reference standing for a value."""
    container = pod(objects, name)["containers"][0]
    maps = of_kind(objects, "ConfigMap")
    environment: dict[str, str] = {}
    for source in container.get("envFrom", []):
        environment.update(maps[source["configMapRef"]["name"]]["data"])
    for variable in container.get("env", []):
        environment[variable["name"]] = variable.get("value", "<from a Secret>")
    return environment


@pytest.mark.parametrize("deployment", ["intake", "worker"])
def test_each_container_is_given_the_apps_whole_identity(objects: list[dict[str, Any]], deployment: str) -> None:
    """The App's variables come whole or not at all (`bot serve` and `bot worker` refuse a part)."""
    config.check_identity(container_environment(objects, deployment))


def test_the_run_page_a_worker_links_is_one_readers_can_open(objects: list[dict[str, Any]]) -> None:
    """The worker writes the tracking comment; the intake serves the page, behind its sign-in."""
    worker, intake = (config.Settings(container_environment(objects, name)) for name in ("worker", "intake"))
    assert worker.run_url("ab12cd34") is not None and intake.oauth_login


def test_no_secret_value_is_written_in_the_manifests(objects: list[dict[str, Any]]) -> None:
    assert all(not ({"data", "stringData"} & set(secret)) for secret in of_kind(objects, "Secret").values())
    assert not SECRET_VARIABLES & set(of_kind(objects, "ConfigMap")["github-agent-bot"]["data"])
    for _, container in containers(objects):
        for variable in container.get("env", []):
            if variable["name"] in SECRET_VARIABLES:
                assert "value" not in variable and "secretKeyRef" in variable["valueFrom"], variable["name"]


def test_each_deployment_gets_the_secrets_it_needs_from_secret_refs(objects: list[dict[str, Any]]) -> None:
    for _, container in containers(objects):
        from_secrets = {v["name"] for v in container["env"] if "secretKeyRef" in v.get("valueFrom", {})}
        assert {"BOT_SECRET_KEY", "BOT_DATABASE_URL", "GITHUB_WEBHOOK_SECRET"} <= from_secrets


def test_every_container_runs_as_a_non_root_user(objects: list[dict[str, Any]]) -> None:
    for spec, container in containers(objects):
        context = {**spec["securityContext"], **container.get("securityContext", {})}
        assert context["runAsNonRoot"] is True and context["runAsUser"] != 0
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"]["drop"] == ["ALL"] and "add" not in context["capabilities"]


def test_the_worker_pod_allows_the_user_namespaces_tier_1_needs(objects: list[dict[str, Any]]) -> None:
    spec = pod(objects, "worker")
    context = spec["containers"][0]["securityContext"]
    assert spec["hostUsers"] is False
    assert spec["securityContext"]["seccompProfile"]["type"] in ("Unconfined", "Localhost")
    assert context["procMount"] == "Unmasked" and context["appArmorProfile"]["type"] == "Unconfined"
    assert "privileged" not in context


def test_the_workers_grace_period_covers_its_shutdown_grace(objects: list[dict[str, Any]]) -> None:
    grace = float(of_kind(objects, "ConfigMap")["github-agent-bot"]["data"]["BOT_SHUTDOWN_GRACE"])
    assert pod(objects, "worker")["terminationGracePeriodSeconds"] >= grace + 10


def test_every_container_requests_memory_and_cpu_and_caps_its_memory(objects: list[dict[str, Any]]) -> None:
    for _, container in containers(objects):
        assert {"cpu", "memory"} <= set(container["resources"]["requests"])
        assert "memory" in container["resources"]["limits"]


def test_a_disruption_budget_covers_each_deployment(objects: list[dict[str, Any]]) -> None:
    budgets = of_kind(objects, "PodDisruptionBudget").values()
    for deployment in of_kind(objects, "Deployment").values():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert any(b["spec"]["selector"]["matchLabels"].items() <= labels.items() for b in budgets)


def quantity(text: str) -> int:
    """A Kubernetes memory quantity in bytes (binary or decimal suffix, or none)."""
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9, "": 1}
    number = text.rstrip("KMGTik")
    return int(number) * units[text[len(number):]]


def test_the_worker_is_capped_at_one_episodes_memory_and_runs_one_episode(objects: list[dict[str, Any]]) -> None:
    """Tier 1 under the container's own cgroup (sandbox/own_cgroup.py): the memory limit at or below
    one episode's, one episode at a time."""
    worker = pod(objects, "worker")["containers"][0]
    assert quantity(worker["resources"]["limits"]["memory"]) <= RepoLimits().memory_bytes
    assert {"name": "BOT_WORKERS", "value": "1"} in worker["env"]
