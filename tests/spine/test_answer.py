"""The answer comment: long answers and diffs are cut so the provenance always survives."""
from __future__ import annotations

from adapters.base import Result, Usage
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import answer as answer_module
from bot.job.modes import GitHubMode
from bot.job.pipeline import Job, Turn
from bot.job.run import JobRun
from bot.job.tracking import TrackingComment
from bot.record.recorder import Recorder
from bot.service import store
from bot.workspace.effects import Outcome
from tests.entry_settings import current
from tests.fakes.thread import quiet_thread

GITHUB_LIMIT = 65_536


class RecordingSurface:
    def __init__(self):
        self.posts = []

    async def post(self, body):
        self.posts.append(body)
        return 1

    async def edit(self, handle, body):
        self.posts.append(body)


def answer(text: str, outcome: Outcome | None) -> str:
    db = store.connect(settings=current())
    run_id = Recorder(db).start_run(agent="codex", conversation="o/r#1", limits={}, base_commit="a" * 40)
    result = Result(ok=True, text=text, session_id="s-1", usage=Usage(), events=[], agent="codex")
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="fix")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(quiet_thread()), settings=current())
    return answer_module.compose(JobRun.begin(db, ctx), ctx, "codex", Turn(result, run_id, False, None, "1.0"), outcome)


async def posted(body: str) -> str:
    surface = RecordingSurface()
    await TrackingComment(surface, lambda: []).finish(body)
    return surface.posts[-1]


async def test_long_answer_and_long_diff_keep_the_provenance_under_the_limit():
    """A 60k answer with a 60k diff (a failed push) still ends with the whole provenance block."""
    diff = "diff --git a/x b/x\n" + "+line\n" * 10_000
    outcome = Outcome("failed", "Pushing to `main` failed: rejected. Here is the change as a diff.",
                      "a" * 40, "b" * 40, diff=diff)
    body = await posted(answer("word " * 12_000, outcome))
    assert len(body) < GITHUB_LIMIT
    assert "Pushing to `main` failed" in body and "(diff truncated)" in body
    assert body.rstrip().endswith("-->") and "<!-- bot:run" in body and body.count("</details>") == 2


async def test_answer_cut_inside_a_code_block_closes_the_fence():
    """A long answer cut inside a ``` block closes it, so the provenance is not swallowed as code."""
    body = answer("Here:\n```python\n" + "x = 1\n" * 20_000 + "```\n", None)
    head = body[:body.index("<details>")]
    assert "(answer truncated)" in head and head.count("```") % 2 == 0
