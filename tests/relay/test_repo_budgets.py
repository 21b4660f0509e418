"""A repository's `.github/bot.yml` budgets reach the relay through the episode's model channel: they
lower the operator's caps, never raise them."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from adapters import base
from adapters.base import Credentials
from bot.episode.model_channel import model_channel
from bot.workspace.repo_config import parse
from sandbox.base import SandboxConfig
from tests.entry_settings import current
from tests.relay.conftest import ANTHROPIC, REAL_KEY, post


def _ctx():
    return SimpleNamespace(conversation="octo/repo#12", requester_id=42, repo_id=0, installation_id=7, secrets=[], settings=current())


async def _three_calls(tmp_path: Path, recorder, run_id, fake, monkeypatch, bot_yml: str) -> base.Result:
    """Three calls (15 tokens each) through the channel of a claude episode under `bot_yml`; the result as the answer sees it."""
    monkeypatch.setenv("BOT_CLAUDE_BASE_URL", fake.url)
    monkeypatch.setenv("BOT_BUDGET_TURN_TOKENS", "20")
    adapter = base.get("claude")
    result = base.Result(ok=True, text="", session_id=None, usage=base.Usage(), events=[])
    sandbox = SandboxConfig(workdir=tmp_path, home=tmp_path / "home", allowed_hosts=adapter.default_allowed_hosts)
    async with model_channel("claude", adapter, Credentials(env={"ANTHROPIC_API_KEY": REAL_KEY}), _ctx(),
                             recorder, run_id, sandbox, repo_budgets=parse(bot_yml).budgets) as channel:
        for _ in range(3):
            await post(channel.relay, *ANTHROPIC)
        channel.explain_stop(result)
    return result


async def test_a_repository_lowering_a_cap_stops_the_turn_at_its_cap(tmp_path, recorder, run_id, fake, monkeypatch):
    result = await _three_calls(tmp_path, recorder, run_id, fake, monkeypatch, "budgets:\n  turn_tokens: 5\n")
    assert (result.ok, result.failure) == (False, "refused")
    assert result.error == ("budget reached: this turn's tokens is 15 tokens of a 5 tokens cap (turn_tokens); "
                            "raise budgets.turn_tokens in the repository's .github/bot.yml up to the operator's 20")


async def test_a_repository_value_above_the_operators_cap_does_not_raise_it(tmp_path, recorder, run_id, fake,
                                                                           monkeypatch):
    result = await _three_calls(tmp_path, recorder, run_id, fake, monkeypatch, "budgets:\n  turn_tokens: 1000\n")
    assert result.error == ("budget reached: this turn's tokens is 30 tokens of a 20 tokens cap (turn_tokens); "
                            "the operator can raise BOT_BUDGET_TURN_TOKENS")
