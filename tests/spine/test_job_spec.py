"""The job spec the queue stores: a frozen JobSpec, read strictly, with today's JSON keys."""
from __future__ import annotations

import json
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.intake import grammar
from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec, SpecError
from bot.service import queue, store
from tests.entry_settings import current
from tests.spine.helpers import enqueue

# a row as the intake before JobSpec wrote it (the store adds event and action)
PREVIOUS_ROW = json.dumps({
    "repo": "octo/repo", "repo_id": 9, "installation_id": 5, "author": "alice", "author_id": 1,
    "author_type": "User", "association": "MEMBER", "number": 3, "is_pr": True, "title": "Fix it",
    "target": {"type": "review_comment", "id": 71, "thread": 70, "path": "a.py", "line": 4},
    "trigger_key": "pull_request_review_comment.created:comment:71", "event": "pull_request_review_comment",
    "delivery": "d-1", "action": "created",
    "command": {"kind": "run", "agent": "codex", "new_session": False, "request": "explain",
                "unknown_name": None, "review": False, "agents": []}})


def test_a_row_written_by_the_previous_version_loads():
    spec = JobSpec.from_json(PREVIOUS_ROW)
    assert (spec.repo, spec.number, spec.author, spec.command.agent, spec.review_thread) == (
        "octo/repo", 3, "alice", "codex", 70)


def test_a_spec_is_written_back_with_the_keys_it_was_read_from():
    assert json.loads(JobSpec.from_json(PREVIOUS_ROW).to_json()) == json.loads(PREVIOUS_ROW)


def test_an_automatic_spec_round_trips():
    spec = JobSpec(repo="o/r", number=1, author="bob", command=Command(kind="run", review=True, agents=("claude",)),
                   automatic=Automatic(kind="label", detail="bot:claude"))
    assert JobSpec.from_json(spec.to_json()) == spec


def test_a_command_from_before_reviews_loads_without_review_and_agents():
    row = {"repo": "o/r", "number": 1, "author": "bob",
           "command": {"kind": "run", "agent": None, "new_session": False, "request": "x", "unknown_name": None}}
    assert JobSpec.from_json(json.dumps(row)).command == Command(kind="run", request="x")


def test_an_unknown_field_is_refused_by_name():
    row = {**json.loads(PREVIOUS_ROW), "priority": 1}
    with pytest.raises(SpecError, match="unknown field 'priority'"):
        JobSpec.from_json(json.dumps(row))


def test_an_unknown_command_field_is_refused_by_name():
    row = json.loads(PREVIOUS_ROW)
    row["command"]["shell"] = "rm -rf /"
    with pytest.raises(SpecError, match="unknown field 'command.shell'"):
        JobSpec.from_json(json.dumps(row))


def test_a_true_is_not_a_number():
    row = {**json.loads(PREVIOUS_ROW), "number": True}
    with pytest.raises(SpecError, match="'number' is bool, not int"):
        JobSpec.from_json(json.dumps(row))


def test_a_spec_without_its_repository_is_refused():
    row = json.loads(PREVIOUS_ROW)
    del row["repo"]
    with pytest.raises(SpecError, match="lacks 'repo'"):
        JobSpec.from_json(json.dumps(row))


def test_text_that_is_not_json_is_refused():
    with pytest.raises(SpecError, match="not JSON"):
        JobSpec.from_json("{repo")


def test_a_claimed_job_carries_a_job_spec():
    db = store.connect(settings=current())
    enqueue(db, "episode", "octo/repo#3", json.loads(PREVIOUS_ROW))
    spec = queue.claim(db, "w1").spec
    assert (spec.command, spec.review_thread) == (Command(kind="run", agent="codex", request="explain"), 70)


def test_a_job_whose_spec_cannot_be_read_fails_with_the_reason_and_the_next_is_claimed():
    db = store.connect(settings=current())
    broken = enqueue(db, "episode", "o/r#1", {"repo": "o/r"})
    good = enqueue(db, "episode", "octo/repo#3", json.loads(PREVIOUS_ROW))
    assert queue.claim(db, "w1").id == good
    row = store.get_job(db, broken)
    assert (row["status"], row["error"]) == ("failed", "unreadable job spec: job spec lacks 'number'")


def test_a_push_review_that_coalesced_pushes_loads_with_their_count():
    row = {**json.loads(PREVIOUS_ROW), "automatic": {"kind": "synchronize", "detail": "abc", "draft": False},
           "coalesced": 3}
    assert JobSpec.from_json(json.dumps(row)).coalesced == 3


def test_a_command_kind_outside_the_grammars_kinds_is_refused_by_name():
    row = json.loads(PREVIOUS_ROW)
    row["command"]["kind"] = "shell"
    with pytest.raises(SpecError, match="'command.kind' is 'shell', not one of help, pause"):
        JobSpec.from_json(json.dumps(row))


@given(st.text(max_size=20))
def test_a_stored_command_kind_loads_only_when_the_grammar_declares_it(kind):
    row = json.loads(PREVIOUS_ROW)
    row["command"]["kind"] = kind
    declared = set(typing.get_args(grammar.CommandKind))
    if kind in declared:
        assert JobSpec.from_json(json.dumps(row)).command.kind == kind
    else:
        with pytest.raises(SpecError):
            JobSpec.from_json(json.dumps(row))


def test_a_reply_kind_the_intake_never_queues_is_refused_by_name():
    row = {**json.loads(PREVIOUS_ROW), "reply": "run_this"}
    with pytest.raises(SpecError, match="'reply' is 'run_this', not one of"):
        JobSpec.from_json(json.dumps(row))


def test_a_stop_reply_from_before_stops_were_checked_still_loads():
    row = {**json.loads(PREVIOUS_ROW), "reply": "stop"}
    assert JobSpec.from_json(json.dumps(row)).reply == "stop"
