"""One step from a job spec to the pipeline's context (bot/job/start.py), for the worker and
the Action: they differ only in what the queue adds."""
from __future__ import annotations

import dataclasses

from bot.config import Settings
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job.modes import GitHubMode
from bot.job.start import Queued, context_for

SPEC = JobSpec(repo="octo/repo", number=3, author="alice", author_id=7, repo_id=9, is_pr=True, title="Fix",
               target={"type": "issue_comment", "id": 5},
               command=Command(kind="run", agent="claude", review=True, agents=("claude", "codex"), request="look"))


def test_the_actions_context_is_the_spec_in_its_thread():
    thread, surface = object(), object()
    ctx = context_for(SPEC, thread, surface, settings=Settings({"BOT_PROGRESS_INTERVAL": "2"}))
    assert (ctx.conversation, ctx.repo, ctx.number, ctx.requester, ctx.requester_id, ctx.repo_id) == (
        "octo/repo#3", "octo/repo", 3, "alice", 7, 9)
    assert (ctx.agent, ctx.agents, ctx.review, ctx.request, ctx.target) == (
        "claude", ("claude", "codex"), True, "look", {"type": "issue_comment", "id": 5})
    assert (ctx.thread, ctx.surface, ctx.installation_id, ctx.job_id) == (thread, surface, None, None)
    assert isinstance(ctx.mode, GitHubMode)


def test_the_services_context_carries_what_the_queue_knows():
    queued = Queued(41, "octo/repo#3", tracking_handle=12)
    ctx = context_for(dataclasses.replace(SPEC, installation_id=5), object(), object(), settings=Settings({}),
                      queued=queued)
    assert (ctx.job_id, ctx.queued, ctx.installation_id) == (41, queued, 5)


def test_the_job_holds_its_spec_itself_not_a_copy_of_its_fields():
    assert context_for(SPEC, object(), object(), settings=Settings({})).spec is SPEC
