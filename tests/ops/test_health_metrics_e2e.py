"""/metrics, /readyz and JSON logs of a real `bot serve` wired to the fake GitHub."""
from __future__ import annotations

import json
import re

import httpx
import pytest

from tests.ops.soak import JOB_MARKER, _comment_payload
from tests.spine.service import REPO, Service, free_port, make_remote, seeded_github, service_env

pytestmark = pytest.mark.e2e
FAMILIES = ("bot_deliveries_total", "bot_queue_depth", "bot_queue_oldest_age_seconds", "bot_jobs",
            "bot_jobs_finished_total", "bot_episode_duration_seconds", "bot_model_tokens_total",
            "bot_model_cost_usd_total", "bot_sandbox_refusals_total", "bot_bridge_calls_total",
            "bot_github_calls_total", "bot_retries_total", "bot_github_rate_limit_waits_total")


@pytest.fixture
def served(tmp_path):
    gh = seeded_github()
    metrics_port = free_port()
    env = service_env(tmp_path, gh, make_remote(tmp_path), "http://127.0.0.1:9",
                      BOT_METRICS_ADDR=f"127.0.0.1:{metrics_port}", BOT_LOG_FORMAT="json")
    service = Service(env, tmp_path / "serve.log").start()
    try:
        yield gh, service, f"http://127.0.0.1:{metrics_port}/metrics", tmp_path / "serve.log"
    finally:
        service.stop()
        gh.stop()


def scrape(url: str) -> str:
    response = httpx.get(url, timeout=10)
    assert response.status_code == 200
    return response.text


def sample(text: str, name: str, **labels: str) -> float:
    """The value of the sample `name` with exactly these labels (0 when absent)."""
    for line in text.splitlines():
        found = re.fullmatch(r"([a-z_]+)(?:\{(.*)\})? (\S+)", line)
        if found and found.group(1) == name and dict(re.findall(r'(\w+)="([^"]*)"', found.group(2) or "")) == labels:
            return float(found.group(3))
    return 0.0


def help_answered(gh, service) -> None:
    comment = gh.add_comment(REPO, 1, "@bot help", user="Codertocat")
    assert service.deliver(_comment_payload(1, comment["id"], "@bot help")).status_code == 202
    gh.wait_for(lambda: any(JOB_MARKER.search(c["body"]) for c in gh.comments(REPO, 1)
                            if c["user"]["login"] == "bot[bot]"), timeout=60)


def test_metrics_listener_exposes_the_listed_families(served):
    gh, service, url, _ = served
    text = scrape(url)
    assert [f for f in FAMILIES if f"# TYPE {f.removesuffix('_total')} " not in text
            and f"# TYPE {f} " not in text] == []


def test_metrics_move_when_a_job_runs(served):
    gh, service, url, _ = served
    before = scrape(url)
    help_answered(gh, service)
    gh.wait_for(lambda: sample(scrape(url), "bot_jobs_finished_total", kind="reply", status="done") == 1)
    after = scrape(url)
    assert sample(after, "bot_deliveries_total", outcome="queued") == sample(before, "bot_deliveries_total",
                                                                              outcome="queued") + 1
    assert sample(after, "bot_github_calls_total", method="POST", status="201") > sample(
        before, "bot_github_calls_total", method="POST", status="201")
    assert sample(after, "bot_jobs", status="done", agent="-") == 1


def test_metrics_are_not_on_the_public_port_without_a_token(served):
    _, service, _, _ = served
    assert httpx.get(f"{service.url}/metrics", timeout=10).status_code == 404


def test_readyz_is_ready_with_the_counts_of_the_home_page(served):
    gh, service, _, _ = served
    help_answered(gh, service)
    gh.wait_for(lambda: httpx.get(f"{service.url}/readyz", timeout=10).json()["jobs"]["done"] == 1)
    ready = httpx.get(f"{service.url}/readyz", timeout=10)
    assert ready.status_code == 200 and ready.json()["ready"] is True
    assert ready.json()["workers"] == "claiming" and ready.json()["app"] == "verified"
    home = httpx.get(service.url, timeout=10).text
    assert re.search(r"\b1\b[^<]*</[^>]+>\s*done|done[^0-9]*\b1\b", home), home


def test_json_logs_name_the_job_and_thread_on_every_line_of_the_job(served):
    """A 502 on the answer makes the job log its retry: that line is JSON and names the job and thread."""
    gh, service, _, log_path = served
    gh.fail_next("POST", r"/issues/1/comments$", status=502)
    help_answered(gh, service)
    lines = [json.loads(line) for line in log_path.read_text().splitlines()]
    retries = [line for line in lines if line["logger"] == "bot.retry"]
    assert retries and all(line["thread"] == f"{REPO}#1" and line["job"] == "1" for line in retries)
    assert [line for line in lines if "job" in line and line["thread"] != f"{REPO}#1"] == []
