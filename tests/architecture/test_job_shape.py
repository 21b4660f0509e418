"""The job's shape (issue 34): the job's context is frozen and carries no Optional fact beyond the
few listed here, each with why it may be absent; the job's run state (database, secrets, recorder,
tracking comment) lives in one `JobRun`, begun in one place. tests/spine/test_job_connections_e2e.py
counts, in a whole job, that the run is begun once and that the job opens no connection of its own."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job.context import Job
from bot.job.modes import GitHubMode

ROOT = Path(__file__).resolve().parents[2]
NONE = re.compile(r"\|\s*None\b|\bNone\s*\||Optional\[")

# each fact a job may lack, and why; a new Optional field joins this list with its reason, or is made required
MAY_BE_ABSENT = {
    "queued": "only the service queues a job; the Action and `bot run` have no queue",
}


def optional_fields() -> set[str]:
    """Fields whose annotation (a string: the module postpones them) admits None."""
    return {f.name for f in dataclasses.fields(Job) if NONE.search(str(f.type))}


def test_the_job_context_is_frozen():
    assert Job.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_every_optional_fact_of_a_job_says_why_it_may_be_absent():
    assert optional_fields() == set(MAY_BE_ABSENT)


def test_the_jobs_settings_and_mode_are_required():
    required = {f.name for f in dataclasses.fields(Job)
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
    assert {"spec", "settings", "mode", "surface"} <= required


def test_the_job_holds_its_spec_and_copies_none_of_its_fields():
    """What was asked, by whom and where is read from the spec itself: no fact is written twice."""
    fields = {f.name for f in dataclasses.fields(Job)}
    assert "spec" in fields
    copied = {f.name for f in dataclasses.fields(JobSpec)} | {f.name for f in dataclasses.fields(Command)}
    assert fields & copied == set()


def test_a_jobs_github_thread_is_held_by_its_mode_which_cannot_lack_it():
    """A job from GitHub always has its thread and one from the terminal never has one: no job
    field for it that a step must ask about."""
    assert "thread" not in {f.name for f in dataclasses.fields(Job)}
    thread = next(f for f in dataclasses.fields(GitHubMode) if f.name == "thread")
    assert thread.default is dataclasses.MISSING and not NONE.search(str(thread.type))


def test_the_jobs_run_state_is_not_in_its_context():
    assert {"findings", "tracking_handle", "on_tracking_created", "job_id", "secrets"} & {
        f.name for f in dataclasses.fields(Job)} == set()


def test_the_job_run_is_begun_only_by_the_pipeline():
    begun = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "bot").rglob("*.py")
                   if re.search(r"\bJobRun(\.begin)?\(", p.read_text()) and p.name != "run.py")
    assert begun == ["bot/job/pipeline.py"]


def test_an_automations_own_facts_are_its_modes_not_the_jobs():
    """The spend counted against an automation's day and its labeler come with its mode
    (AutomationMode), so a person's job cannot carry either."""
    fields = {f.name for f in dataclasses.fields(Job)}
    assert {"automation_spend", "labels"} & fields == set()
