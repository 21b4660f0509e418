"""Review figures: the wall time of a two-agent review (claude and codex at once)
against the slower of the two single-agent reviews, on the same pull request, through `bot serve`
with the real CLIs and one fake provider per agent. From the delivery of `@bot … review` to the
final tracking comment. Aim: two agents take at most 1.2x the slower single one (the fan-out runs
in parallel).
"""
from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.size import pick

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fakes.provider import call, say  # noqa: E402
from tests.review.world import BUG_LINE, open_world  # noqa: E402

ROUNDS = pick(3, 1)
FIX = {"path": "app.py", "start_line": BUG_LINE, "end_line": BUG_LINE, "replacement": "    return a + b",
       "body": "add() subtracts instead of adding.", "severity": "important"}


def _script(world, agents: tuple[str, ...]) -> None:
    for agent in agents:
        world.providers[agent].script(call("suggest_change", FIX), say("add() is broken."))


def _one(agents: tuple[str, ...], comment_id: int) -> float:
    with tempfile.TemporaryDirectory() as tmp, open_world(Path(tmp)) as world:
        _script(world, agents)
        started = time.monotonic()
        command = f"@bot review with {', '.join(agents)}" if len(agents) > 1 else f"@bot {agents[0]} review"
        world.ask(command, comment_id)
        world.answer(timeout=300)
        took = time.monotonic() - started
        assert len(world.reviews()) == 1, "no review arrived"
        return took


def run() -> list[str]:
    times: dict[str, list[float]] = {"claude": [], "codex": [], "claude+codex": []}
    for round_ in range(ROUNDS):
        for name, agents in (("claude", ("claude",)), ("codex", ("codex",)), ("claude+codex", ("claude", "codex"))):
            times[name].append(_one(agents, 9000 + round_))
    medians = {name: statistics.median(values) for name, values in times.items()}
    slower = max(medians["claude"], medians["codex"])
    lines = [f"{name}: median {m:.1f} s over {ROUNDS} ({', '.join(f'{t:.1f}' for t in times[name])})"
             for name, m in medians.items()]
    lines.append(f"two agents / slower single agent: {medians['claude+codex'] / slower:.2f}x (aim <= 1.2x)")
    from bench import review_tokens  # noqa: PLC0415 - the re-review's cost, the section's second figure
    return lines + review_tokens.run()


if __name__ == "__main__":
    for line in run():
        print(line)
