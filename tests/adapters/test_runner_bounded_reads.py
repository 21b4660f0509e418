"""bot/episode/runner.py reads what the CLI wrote on the host with a cap, and says when it cut it."""
from __future__ import annotations

from bot.episode.runner import LAST_MESSAGE_CAP, run_episode
from sandbox.tier0 import Tier0Spawner
from tests.adapters.test_runner import ScriptAdapter, _setup

WRITE_BIG_ANSWER = ("import os; os.makedirs('../home/.bot', exist_ok=True); "
                    f"open('../home/.bot/last.txt', 'w').write('x' * {2 * LAST_MESSAGE_CAP})")


async def test_an_answer_file_past_the_cap_is_read_up_to_it_and_the_answer_says_it_was_cut(tmp_path):
    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(WRITE_BIG_ANSWER, last=".bot/last.txt"), episode, Tier0Spawner(), config)
    body, _, note = (result.text or "").rpartition("\n")
    assert body.strip("x") == "" and len(body) == LAST_MESSAGE_CAP
    assert note == f"… (the CLI's answer was cut at {LAST_MESSAGE_CAP:,} bytes)"


async def test_an_answer_within_the_cap_is_whole(tmp_path):
    script = WRITE_BIG_ANSWER.replace(f"'x' * {2 * LAST_MESSAGE_CAP}", "'the answer'")
    episode, config = _setup(tmp_path)
    result = await run_episode(ScriptAdapter(script, last=".bot/last.txt"), episode, Tier0Spawner(), config)
    assert result.text == "the answer"
