"""Another vendor when one fails, without the CLIs: the `fallback` key of `.github/bot.yml`, the
chain of agents (no loop, skipped with a reason), the reply texts (the provider's words inert, when
to retry) and the failed attempt's spend in the provenance."""
from __future__ import annotations

import asyncio
import json
import re

import pytest

from adapters.base import Result, Tier, Usage
from bot.episode.stop import Stop
from bot.episode.turn import Attempt, Turn
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import answer, fallback, replies
from bot.job.context import Job
from bot.job.modes import GitHubMode
from bot.job.run import JobRun
from bot.record import provenance
from bot.record.inert import ZWSP
from bot.record.recorder import Recorder
from bot.relay.unavailable import ProviderUnavailable
from bot.service import store
from bot.workspace.repo_config import ConfigError, RepoConfig, parse
from tests.entry_settings import current
from tests.fakes.thread import quiet_thread

OVERLOADED = ProviderUnavailable("overloaded", 529, 30.0, "Overloaded", "anthropic")
KEYS = {"claude": "ANTHROPIC_API_KEY", "codex": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


class Notes:
    def __init__(self) -> None:
        self.lines: list[str] = []

    async def note(self, text: str, done: bool = True) -> None:
        self.lines.append(text)


def context() -> Job:
    return Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="fix it")),
               conversation="o/r#1", surface=None,
               mode=GitHubMode(quiet_thread()), settings=current())


def turn(agent: str, unavailable: ProviderUnavailable | None = None, text: str = "the answer") -> Turn:
    result = Result(ok=unavailable is None, text=text, session_id=f"s-{agent}", usage=Usage(), events=[],
                    agent=agent)
    return Turn(result, f"run-{agent}", False, None, "1.0", agent=agent, unavailable=unavailable)


def run_chain(cfg: RepoConfig, first: str, down: set[str]) -> tuple[Turn, list[tuple[str, str | None]]]:
    """fallback.run over a fake episode: the agents in `down` are overloaded, the others answer."""
    asked: list[tuple[str, str | None]] = []

    async def attempt(name: str, fresh_reason: str | None) -> Turn:
        asked.append((name, fresh_reason))
        return turn(name, OVERLOADED if name in down else None)

    final = asyncio.run(fallback.run(JobRun.begin(store.connect(settings=current()), context()), context(), cfg, first, Notes(), asyncio.Event(),
                                     attempt=attempt))
    return final, asked


@pytest.fixture
def keys(monkeypatch):
    for variable in KEYS.values():
        monkeypatch.setenv(variable, "sk-fallback-test-0123456789")


def test_the_fallback_key_names_agents_in_order():
    assert parse("fallback: [codex, gemini]\n").fallback == ("codex", "gemini")


def test_without_the_fallback_key_there_is_no_fallback():
    assert parse("").fallback == ()


def test_a_fallback_naming_an_unknown_agent_is_refused():
    with pytest.raises(ConfigError) as err:
        parse("fallback: [copilot]\n")
    assert err.value.key == "fallback" and "is not an agent" in str(err.value)


def test_a_fallback_naming_an_agent_twice_is_refused():
    with pytest.raises(ConfigError) as err:
        parse("fallback: [codex, codex]\n")
    assert "names an agent twice" in str(err.value)


def test_the_chain_never_returns_to_the_first_agent_nor_repeats_one():
    assert fallback.chain("claude", ["codex", "claude", "codex", "gemini"]) == ["codex", "gemini"]


def test_an_overloaded_provider_hands_the_turn_to_the_next_agent_fresh_with_the_recap(keys):
    final, asked = run_chain(RepoConfig(fallback=("codex",)), "claude", {"claude"})
    assert asked == [("claude", None), ("codex", "Claude was overloaded")]
    assert final.agent == "codex" and final.unavailable is None
    assert final.attempts == (Attempt("claude", "run-claude", OVERLOADED),)


def test_a_failure_the_relay_did_not_see_as_unavailability_does_not_fall_back(keys):
    async def attempt(name: str, fresh_reason: str | None) -> Turn:
        failed = turn(name)
        failed.result.ok = False
        return failed

    final = asyncio.run(fallback.run(JobRun.begin(store.connect(settings=current()), context()), context(), RepoConfig(fallback=("codex",)), "claude",
                                     Notes(), asyncio.Event(), attempt=attempt))
    assert final.agent == "claude" and final.attempts == ()


def test_every_agent_of_the_chain_is_tried_once_at_most(keys):
    final, asked = run_chain(RepoConfig(fallback=("codex", "gemini", "claude")), "claude",
                             {"claude", "codex", "gemini"})
    assert [name for name, _ in asked] == ["claude", "codex", "gemini"]
    assert final.unavailable is not None and [a.agent for a in final.attempts] == ["claude", "codex"]


def test_an_agent_without_a_credential_is_skipped_with_the_reason(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-fallback-test-0123456789")
    monkeypatch.setenv("GEMINI_API_KEY", "sk-fallback-test-0123456789")
    final, asked = run_chain(RepoConfig(fallback=("codex", "gemini")), "claude", {"claude"})
    assert [name for name, _ in asked] == ["claude", "gemini"]
    assert final.skipped == (("codex", "no credential configured"),)


def test_an_agent_the_repository_does_not_allow_is_skipped(keys):
    cfg = RepoConfig(allowed_agents=("claude", "gemini"), fallback=("codex", "gemini"))
    final, asked = run_chain(cfg, "claude", {"claude"})
    assert final.agent == "gemini" and final.skipped == (("codex", "not in allowed_agents"),)


def test_a_fallback_answer_says_who_was_overloaded_and_who_answered():
    assert replies.fell_back([("claude", "overloaded")], "codex") == "↪️ Claude was overloaded; answered by Codex."


def test_a_fallback_answer_names_the_agents_it_skipped():
    line = replies.fell_back([("claude", "quota")], "gemini", [("codex", "no credential configured")])
    assert line == "↪️ Claude was out of quota; answered by Gemini. Not tried: Codex (no credential configured)."


def test_without_a_fallback_the_reply_names_the_failure_the_providers_words_and_when_to_retry():
    text = replies.provider_unavailable("claude", OVERLOADED)
    assert text.startswith("❌ Claude was overloaded: Anthropic answered HTTP 529 “Overloaded”. ")
    assert "Try again in 30 s (the provider's Retry-After)." in text
    assert "`fallback: [AGENT, …]` in `.github/bot.yml`" in text


def test_a_quota_error_without_retry_after_says_to_retry_once_the_quota_allows():
    found = ProviderUnavailable("quota", 429, None, "You exceeded your current quota", "openai")
    assert "Try again once the account's quota or billing allows it." in replies.provider_unavailable("codex", found)


def test_the_providers_words_are_made_inert():
    words = "@org/team see <img src=x onerror=alert(1)> [here](https://evil.example) **now**\nsecond line"
    found = ProviderUnavailable("overloaded", 529, None, words, "anthropic")
    text = replies.provider_unavailable("claude", found)
    quoted = text[text.index("“") + 1:text.index("”")]
    assert f"@{ZWSP}org" in quoted and re.search(r"(?<!\\)[<>\[\]()*]", quoted) is None
    assert "\n" not in quoted


def _spent(recorder: Recorder, run_id: str, tokens: int, cost: float) -> None:
    detail = {"tokens": {"input_tokens": tokens, "output_tokens": 0}, "cost_usd": cost, "status": 200}
    recorder.record(run_id, Tier.ENFORCED, "model_call", tool="anthropic/anthropic", outcome="ok",
                    raw=json.dumps(detail))


def test_the_answering_runs_provenance_shows_the_failed_attempts_spend():
    recorder = Recorder(store.connect(settings=current()))
    first = recorder.start_run(agent="claude", conversation="o/r#1", limits={})
    answered = recorder.start_run(agent="codex", conversation="o/r#1", limits={})
    _spent(recorder, first, 1500, 0.02)
    recorder.record(answered, Tier.ENFORCED, fallback.EVENT, tool="claude", outcome="overloaded",
                    raw=json.dumps({"agent": "claude", "run": first, "kind": "overloaded", "status": 529}))
    summary = provenance.build(recorder, answered, agent="codex").summary_line()
    assert "before: claude overloaded (HTTP 529), 1.5k tokens, $0.02" in summary


def test_a_failed_attempt_that_cost_nothing_says_so():
    recorder = Recorder(store.connect(settings=current()))
    first = recorder.start_run(agent="claude", conversation="o/r#1", limits={})
    answered = recorder.start_run(agent="codex", conversation="o/r#1", limits={})
    recorder.record(answered, Tier.ENFORCED, fallback.EVENT, tool="claude", outcome="overloaded",
                    raw=json.dumps({"agent": "claude", "run": first, "kind": "overloaded", "status": 529}))
    assert "before: claude overloaded (HTTP 529), 0 tokens, $0.00" in provenance.build(recorder, answered).summary_line()


def test_an_answer_by_the_fallback_agent_starts_with_the_line():
    db = store.connect(settings=current())
    run_id = Recorder(db).start_run(agent="codex", conversation="o/r#1", limits={}, base_commit="a" * 40)
    answered = turn("codex")
    answered.run_id, answered.attempts = run_id, (Attempt("claude", "run-x", OVERLOADED),)
    body = answer.compose(JobRun.begin(db, context()), context(), "codex", answered, None)
    assert body.startswith("↪️ Claude was overloaded; answered by Codex.\n\nthe answer")


def test_an_answer_whose_provider_was_unavailable_names_the_failure_not_the_cli():
    db = store.connect(settings=current())
    run_id = Recorder(db).start_run(agent="claude", conversation="o/r#1", limits={}, base_commit="a" * 40)
    failed = turn("claude", OVERLOADED, text="API Error: 529 giving up")
    failed.run_id = run_id
    body = answer.compose(JobRun.begin(db, context()), context(), "claude", failed, None)
    assert body.startswith("❌ Claude was overloaded: Anthropic answered HTTP 529") and "API Error" not in body


def test_an_agent_whose_episode_cannot_start_is_skipped_with_the_reason(keys):
    async def attempt(name: str, fresh_reason: str | None) -> Turn:
        if name == "codex":
            raise Stop("the codex adapter declares no model relay channel for X: refusing\n\nmore")
        return turn(name, OVERLOADED if name == "claude" else None)

    final = asyncio.run(fallback.run(JobRun.begin(store.connect(settings=current()), context()), context(), RepoConfig(fallback=("codex", "gemini")), "claude",
                                     Notes(), asyncio.Event(), attempt=attempt))
    assert final.agent == "gemini" and [a.agent for a in final.attempts] == ["claude"]
    assert final.skipped == (("codex", "the codex adapter declares no model relay channel for X: refusing"),)
