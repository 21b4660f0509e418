"""Honest failure (bot/episode/honesty.py): a provider error, a run whose CLI was never given the
bot's tools, and an answer claiming changes that no recorded act backs are reported as such in
the answer comment, with the reason, not posted as an ordinary answer."""
from __future__ import annotations

from adapters.base import Event, EventKind, Result, Tier, Usage
from bot.episode import honesty
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from bot.job import answer as answer_module
from bot.job.modes import GitHubMode
from bot.job.pipeline import Job, Turn
from bot.job.run import JobRun
from bot.record.recorder import Recorder
from bot.service import store
from tests.entry_settings import current
from tests.fakes.thread import quiet_thread


def result(ok: bool = True, text: str = "", failure: str | None = None, error: str | None = None) -> Result:
    return Result(ok=ok, text=text, session_id="s-1", usage=Usage(), events=[], agent="codex",
                  failure=failure, error=error)


def compose(run: Result, record=lambda recorder, run_id: None, touched=None) -> str:
    db = store.connect(settings=current())
    recorder = Recorder(db)
    run_id = recorder.start_run(agent="codex", conversation="o/r#1", limits={}, base_commit="a" * 40)
    record(recorder, run_id)
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="fix")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(quiet_thread()), settings=current())
    return answer_module.compose(JobRun.begin(db, ctx), ctx, "codex", Turn(run, run_id, False, None, "1.0"), None, touched)


def head(body: str) -> str:
    return body[:body.index("<details>")]


# -- (a) the provider failed -----------------------------------------------------------------

def test_provider_error_reads_as_the_provider_failing():
    """failure=provider: the thread says the model provider failed and why."""
    body = compose(result(False, failure="provider", error="HTTP 500: overloaded"))
    assert head(body).startswith("❌ codex did not finish: the model provider failed: HTTP 500: overloaded")


def test_rejected_key_reads_as_the_provider_rejecting_it():
    """failure=auth: the provider rejected the credentials, said as such."""
    body = compose(result(False, failure="auth", error="invalid x-api-key (HTTP 401)"))
    assert "the model provider rejected the credentials: invalid x-api-key (HTTP 401)" in head(body)


def test_other_failures_keep_their_own_reason():
    """A timeout is not dressed up as a provider failure."""
    body = compose(result(False, failure="timeout", error="stopped after the 600 s time limit"))
    assert "did not finish: stopped after the 600 s time limit" in head(body)


# -- (b) the CLI never listed the bridge's tools -----------------------------------------------

def test_strict_run_whose_cli_never_listed_the_tools_fails_saying_so():
    """No tools/list request reached the bridge: the run is a failure naming that, even though
    the CLI exited 0 with text."""
    run = result(True, text="I fixed the add function.")
    honesty.require_tools(run, 0, strict=True, bridged=True)
    assert (run.ok, run.failure) == (False, "bridge")
    assert head(compose(run)).startswith("❌ codex did not finish: the agent was never given the bot's tools")


def test_runner_bridge_failure_is_worded_as_never_given_the_tools():
    """The runner's own finding (never connected) keeps its detail under the plain reason."""
    run = result(False, failure="bridge", error="codex never connected to the bot's tool bridge")
    honesty.require_tools(run, 0, strict=True, bridged=True)
    assert run.error == ("the agent was never given the bot's tools "
                         "(codex never connected to the bot's tool bridge)")


def test_listed_tools_leave_the_run_alone():
    """One tools/list request is enough: the answer stands."""
    run = result(True, text="Done.")
    honesty.require_tools(run, 1, strict=True, bridged=True)
    assert run.ok and run.failure is None


def test_native_mode_is_not_held_to_the_bridge():
    """In native mode the CLI works with its own tools; not listing the bridge is no failure."""
    run = result(True, text="Done.")
    honesty.require_tools(run, 0, strict=False, bridged=True)
    assert run.ok


def test_provider_failure_stays_the_reason_without_tools():
    """A provider error before the tools were listed is reported as the provider's."""
    run = result(False, failure="provider", error="HTTP 503")
    honesty.require_tools(run, 0, strict=True, bridged=True)
    assert (run.failure, run.error) == ("provider", "HTTP 503")


# -- (c) changes claimed with no act on record --------------------------------------------------

def attested_text(recorder: Recorder, run_id: str) -> None:
    recorder.attest(run_id, Event(EventKind.TEXT, text="I've fixed the add function."))


def test_claimed_changes_without_any_tool_call_get_a_warning():
    """No bridged call, no native read, nothing changed, yet 'I've fixed': warned at the top."""
    body = compose(result(True, text="I've fixed the add function."), attested_text)
    assert head(body).startswith("⚠️ codex read nothing and called no tool in this run, yet its "
                                 "answer describes changes: none were made.")
    assert "I've fixed the add function." in head(body)


def test_claimed_changes_after_a_bridged_call_are_not_warned():
    """A recorded bridge call backs the answer: no warning."""
    def record(recorder, run_id):
        recorder.enforced(run_id, "read_file", {"path": "app.py"}, outcome="ok", duration_ms=1.0)
    body = compose(result(True, text="I've fixed the add function."), record)
    assert "⚠️" not in head(body)


def test_claimed_changes_after_a_native_read_are_not_warned():
    """A native read the CLI reported (Claude's Read) counts as having read the repository."""
    def record(recorder, run_id):
        recorder.attest(run_id, Event(EventKind.TOOL_USE, tool="Read", tier=Tier.ATTESTED))
    body = compose(result(True, text="I updated app.py."), record)
    assert "⚠️" not in head(body)


def test_answer_without_claims_is_not_warned():
    """An explanation that claims no change needs no warning, tool calls or not."""
    body = compose(result(True, text="The add function subtracts; it should return a + b."), attested_text)
    assert "⚠️" not in head(body)


def test_claims_with_files_changed_are_not_warned():
    """Files changed (local mode's touched list) back the claim."""
    body = compose(result(True, text="I've fixed the add function."), attested_text, touched=["app.py"])
    assert "⚠️" not in head(body)
