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

from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric

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


# each agent's review signal over every repository (bot/review/signal.py AgentSignal), read at scrape
# time; the agent label comes from the adapters' registry, and there is no repository label
REVIEW_SIGNAL = (
    ("bot_review_reviews", "Reviews run, by agent.", "reviews"),
    ("bot_review_findings_posted", "Inline review findings posted, by agent.", "posted"),
    ("bot_review_findings_fixed", "Posted review findings fixed, by agent.", "fixed"),
    ("bot_review_findings_declined", "Posted review findings a writer declined, by agent.", "declined"),
    ("bot_review_findings_open", "Posted review findings still open, by agent.", "open"),
    ("bot_review_reactions_up", "Writers' thumbs-up reactions on review comments, by agent.", "thumbs_up"),
    ("bot_review_reactions_down", "Writers' thumbs-down reactions on review comments, by agent.", "thumbs_down"),
    ("bot_review_cost_usd", "Model cost of reviews in USD, by agent.", "cost_usd"),
)


# the same findings per week they were posted (bot/review/signal_series.py Week), the last 12 weeks:
# `week` is the week's Monday (UTC) as the bot computes it, never stored text
REVIEW_SERIES = (
    ("bot_review_week_findings_posted", "Inline review findings posted in the week, by agent and week (its "
     "Monday, UTC).", "posted"),
    ("bot_review_week_findings_fixed", "Of the findings posted in the week, those fixed since.", "fixed"),
    ("bot_review_week_findings_declined", "Of the findings posted in the week, those a writer declined since.",
     "declined"),
)


def review_series(series: dict[str, list[Any]]) -> Iterator[Metric]:
    """Each agent's weekly review signal as gauges labelled by agent and week."""
    for name, description, field in REVIEW_SERIES:
        family = GaugeMetricFamily(name, description, labels=["agent", "week"])
        for agent, weeks in series.items():
            for week in weeks:
                family.add_metric([agent, week.label], getattr(week, field))
        yield family


def review_signal(rows: Iterable[Any]) -> Iterator[Metric]:
    """The per-agent review signal as gauges (rows: bot/review/signal.py AgentSignal)."""
    rows = list(rows)
    for name, description, field in REVIEW_SIGNAL:
        family = GaugeMetricFamily(name, description, labels=["agent"])
        for row in rows:
            family.add_metric([row.agent], getattr(row, field))
        yield family
