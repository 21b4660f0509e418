"""Every end-to-end test module that starts the service runs at least one of its scenarios under
both profiles (developer and deployment, tests/spine/service.py), or says here why it is a
developer's configuration only. A new service scenario cannot silently run under one profile."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
STARTS_SERVICE = re.compile(r"\b(Service|open_world|serving)\(|^def test_\w+\((world|two_agents)\b", re.M)

# module -> why its service runs only under a developer's configuration
DEVELOPER_ONLY = {
    "adapters/test_fifth_agent_e2e.py": "a test-only agent plugged into one process's registry",
    "relay/test_sixth_api_e2e.py": "a test-only wire API and its agent plugged into one process's registries",
    "deploy/test_container_e2e.py": "the image under podman with its own PostgreSQL, intake and workers: deployed already",
    "automations/test_fire_limit_e2e.py": "two intake replicas on a PostgreSQL of its own: deployed already",
    "deploy/test_enterprise_e2e.py": "a configuration of its own: GitHub Enterprise Server's API base",
    "deploy/test_intake_readiness.py": "the intake's readiness on its own; runs no job",
    "deploy/test_replay.py": "bot replay against a running intake; runs no job",
    "ops/test_full_disk_e2e.py": "fills the data dir's own filesystem (a loop mount made for it)",
    "ops/test_health_metrics_e2e.py": "sets each metrics and health option itself, one per test",
    "ops/test_interrupted_run_e2e.py": "kill -9 of the one process that holds the run",
    "ops/test_kill_points_e2e.py": "kill -9 of the one process at each kill point",
    "ops/test_noisy_neighbour_e2e.py": "a load figure of one process",
    "ops/test_record_kill_mid_flood_e2e.py": "kill -9 of the one process that records the run",
    "review/test_large_review_e2e.py": "a budget variant of the review scenario",
    "review/test_review_agents_e2e.py": "a variant of the review scenario (two agents)",
    "review/test_review_public_url_e2e.py": "sets the deployment's public URL and sign-in itself",
    "review/test_severity_e2e.py": "a severity variant of the review scenario",
    "review/test_signal_authority_e2e.py": "a variant of the incremental re-review scenario",
    "settings/test_effective_e2e.py": "the settings page's stored keys in one process",
    "settings/test_automations_page.py": "the page's layout at two widths in a browser, signed in; its fire and its runs are scenarios of tests/automations",
    "settings/test_automation_costs_browser.py": "a run's cost in a browser, signed in (the browser's Host is not the public URL's); the cost's query runs on PostgreSQL in tests/automations/test_last_runs.py",
    "spine/test_acting_permission_e2e.py": "a permission variant of the answer scenario",
    "spine/test_attachments_e2e.py": "an attachment variant of the answer scenario",
    "spine/test_fallback_review_e2e.py": "a variant of the fallback scenario",
    "spine/test_inert_replies_e2e.py": "a text variant of the answer scenario",
    "spine/test_intake_hardening_e2e.py": "the intake's refusals; runs no job",
    "spine/test_job_outcome_log_e2e.py": "reads the text log format line by line",
    "spine/test_stop_quiet_e2e.py": "a log variant of the stop scenario",
    "spine/test_thread_context_e2e.py": "a thread-text variant of the answer scenario",
    "spine/test_tracking_readable_e2e.py": "a checklist variant of the answer scenario",
    "store/test_e2e_scale.py": "builds its own intake and workers on PostgreSQL",
}


@functools.cache
def _service_modules() -> frozenset[str]:
    return frozenset(str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py")
                     if STARTS_SERVICE.search(path.read_text()))


def _has_scenario(path: Path) -> bool:
    tree = ast.parse(path.read_text())
    return any(isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
               and any(isinstance(d, ast.Name) and d.id == "scenario" for d in node.decorator_list)
               for node in ast.walk(tree))


def test_every_module_that_starts_the_service_has_a_scenario_under_both_profiles_or_says_why_not():
    missing = sorted(name for name in _service_modules()
                     if name not in DEVELOPER_ONLY and not _has_scenario(TESTS / name))
    assert not missing, f"give these a @scenario test (tests/spine/service.py) or a reason in DEVELOPER_ONLY: {missing}"


def test_no_module_is_listed_developer_only_without_cause():
    stale = sorted(name for name in DEVELOPER_ONLY
                   if not (TESTS / name).exists() or name not in _service_modules() or _has_scenario(TESTS / name))
    assert not stale, stale


def test_the_deployment_profile_has_what_every_deployment_has():
    from tests.spine.service import Profile

    env = Profile("deployment", "postgresql://bot@/t?host=/tmp").env()
    assert {"BOT_PUBLIC_URL", "GITHUB_CLIENT_ID", "GITHUB_CLIENT_SECRET", "BOT_METRICS_TOKEN", "BOT_DATABASE_URL",
            "BOT_SECRET_KEY"} <= set(env)
    assert env["BOT_LOG_FORMAT"] == "json" and env["BOT_SANDBOX_TIER"] == "1"
