"""The service's Prometheus metrics (prometheus_client), in one registry every layer may count into.

Counters and histograms here move as things happen in this process: deliveries by outcome, jobs
finished, episodes and their duration, bridged tool calls, sandbox refusals, GitHub API calls,
retries and rate-limit waits. Gauges that describe the stored state (queue depth and age, jobs by
status and agent, model tokens and cost by agent from the relay's ledger) are read from the
database when scraped (bot.web.health), so they agree with the page at `/` and survive restarts.

Label values come from small fixed sets (outcomes, statuses, agent and tool names, HTTP methods
and status codes), never from repository, user or comment text.
"""
from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

DELIVERIES = Counter("bot_deliveries", "Webhook deliveries by what intake did with them.",
                     ["outcome"], registry=REGISTRY)
JOBS_FINISHED = Counter("bot_jobs_finished", "Jobs that reached a final status in this process.",
                        ["kind", "status"], registry=REGISTRY)
JOBS_GIVEN_UP = Counter("bot_jobs_given_up", "Jobs given up after their last attempt.", ["kind"],
                        registry=REGISTRY)
EPISODE_SECONDS = Histogram("bot_episode_duration_seconds", "Wall time of one agent episode.",
                            ["agent", "outcome"], registry=REGISTRY,
                            buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1200, 2400, 3600))
BRIDGE_CALLS = Counter("bot_bridge_calls", "Bridged tool calls by tool and outcome.", ["tool", "outcome"],
                       registry=REGISTRY)
SANDBOX_REFUSALS = Counter("bot_sandbox_refusals", "Episodes the sandbox refused to start.", ["agent"],
                           registry=REGISTRY)
GITHUB_CALLS = Counter("bot_github_calls", "GitHub API calls by method and answer status (0: no answer).",
                       ["method", "status"], registry=REGISTRY)
RETRIES = Counter("bot_retries", "Retries of a failed call, by what was retried.", ["what"], registry=REGISTRY)
RATE_LIMIT_WAITS = Counter("bot_github_rate_limit_waits", "Waits GitHub's rate limits asked for.",
                           registry=REGISTRY)
RATE_LIMIT_WAIT_SECONDS = Counter("bot_github_rate_limit_wait_seconds", "Seconds waited for GitHub's rate limits.",
                                  registry=REGISTRY)


def bridge_outcome(outcome: str) -> str:
    """`refused:<code>` keeps its code (a fixed set); anything else is ok or error."""
    return outcome if outcome in ("ok", "error") or outcome.startswith("refused:") else "error"
