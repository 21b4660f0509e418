"""The intake's reading of a push and an install (bot/intake/config_event.py): which events make a job
that reads `.github/bot.yml` again, what the job carries, and that every payload field is read
through its allowlist (hypothesis properties)."""
from __future__ import annotations

import asyncio
import json
import re

import pytest
from gidgethub import sansio
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.intake.config_event import MAX_REPOSITORIES, ConfigRead, candidates, read_detail
from bot.intake.spec import JobSpec
from bot.web import intake
from tests.automations import config_payloads as make
from tests.automations.config_payloads import CONFIG, commit, push
from tests.entry_settings import database
from tests.fakes.webhook_check import webhook_problems

A, B, C = "a" * 40, "b" * 40, "c" * 40
BUILT = {
    "push modifying the file": ("push", push()),
    "push without commits": ("push", push(commits=[])),
    "forced push": ("push", push(forced=True)),
    "installation created": ("installation", make.installation_created()),
    "repositories added": ("installation_repositories", make.repositories_added()),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_a_payload_these_tests_read_validates_against_its_events_schema(name):
    event, data = BUILT[name]
    assert webhook_problems(event, data) == []


def details(event: str, data: dict) -> list[tuple[str, str]]:
    return [(job.spec.repo, job.spec.automatic.detail) for job in candidates(event, data)]


def test_a_push_to_the_default_branch_that_modifies_the_file_reads_it_naming_the_commit():
    assert details("push", push(after=A)) == [("Codertocat/Hello-World", f"push after={A} commit={A}")]


@pytest.mark.parametrize("kind", ["added", "modified", "removed"])
def test_the_commit_named_is_the_last_that_touched_the_file(kind):
    commits = [commit(B, **{kind: (CONFIG,)}), commit(C, modified=("README.md",)), commit(A, modified=("a.py",))]
    assert details("push", push(after=A, commits=commits)) == [("Codertocat/Hello-World", f"push after={A} commit={B}")]


def test_a_push_whose_commits_do_not_touch_the_file_reads_nothing():
    assert candidates("push", push(commits=[commit(A, modified=(".github/bot.yaml", "bot.yml"))])) == []


def test_a_push_to_another_branch_reads_nothing():
    assert candidates("push", push(branch="feature")) == []


def test_a_deleted_default_branch_reads_nothing():
    assert candidates("push", push(after="0" * 40)) == []


@pytest.mark.parametrize("change", [{"commits": []}, {"forced": True}, {"before": "0" * 40},
                                   {"commits": [commit(A, modified=("a.py",))] * 20}])
def test_a_push_whose_commit_list_cannot_tell_reads_the_file_without_naming_a_commit(change):
    data = push(after=A, **{k: v for k, v in change.items()})
    assert details("push", data) == [("Codertocat/Hello-World", f"push after={A}")]


def test_a_push_job_carries_the_repository_and_installation_and_no_thread():
    spec = candidates("push", push())[0].spec
    assert (spec.number, spec.installation_id, spec.repo_id, spec.automatic.kind) == (0, 1, spec.repo_id, "config")
    assert JobSpec.from_dict(spec.to_dict()) == spec


def test_a_redelivered_push_names_the_same_object():
    assert candidates("push", push())[0].spec.trigger_key == candidates("push", push())[0].spec.trigger_key


def test_an_installation_reads_each_repository_it_names():
    data = make.installation_created([("octo/one", 11), ("octo/two", 12)])
    assert details("installation", data) == [("octo/one", "installation"), ("octo/two", "installation")]
    assert [job.delivery_suffix for job in candidates("installation", data)] == [" octo/one", " octo/two"]


def test_repositories_added_to_an_installation_are_read():
    assert details("installation_repositories", make.repositories_added([("octo/three", 13)])) == [
        ("octo/three", "installation")]


def test_an_installation_reads_at_most_its_cap_of_repositories():
    data = make.installation_created([(f"octo/r{n}", n + 1) for n in range(MAX_REPOSITORIES + 5)])
    assert len(candidates("installation", data)) == MAX_REPOSITORIES


@pytest.mark.parametrize("event,action", [("installation", "deleted"), ("installation_repositories", "removed")])
def test_an_uninstall_reads_nothing(event, action):
    data = make.installation_created() if event == "installation" else make.repositories_added()
    assert candidates(event, {**data, "action": action}) == []


def test_a_repository_name_outside_the_allowlist_is_not_read():
    data = make.installation_created([("octo/../x", 11), ("octo/fine", 12), ("octo/a b", 13)])
    assert details("installation", data) == [("octo/fine", "installation")]


def test_an_event_without_an_installation_reads_nothing():
    data = push()
    del data["installation"]
    assert candidates("push", data) == []


@pytest.mark.parametrize("detail", [f"push after={A}", f"push after={A} commit={B}", "installation"])
def test_a_detail_reads_back_as_written(detail):
    read = read_detail(detail)
    assert read is not None and read.detail() == detail


@pytest.mark.parametrize("detail", ["push", f"push after={A[:-1]}", f"push after={A} commit=HEAD", f"push after={A} x=1",
                                    f"push after={A} after={B}", "installation x", f"pull after={A}", "", f"push {A}"])
def test_a_detail_outside_the_allowlist_is_refused(detail):
    assert read_detail(detail) is None


# ---- properties: whatever the payload holds, what a job carries is allowlisted

_ANY = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=50),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner,
                                                                                 max_size=4), max_leaves=20)
_SHA = st.sampled_from([A, B, C, "0" * 40]) | st.text(max_size=41)
_FILES = st.lists(st.sampled_from([CONFIG, "a.py", "/.github/bot.yml", ".github/bot.yml\n"]) | st.text(max_size=20),
                  max_size=3) | _ANY
_COMMIT = st.fixed_dictionaries({"id": _SHA, "added": _FILES, "modified": _FILES, "removed": _FILES}) | _ANY


def _allowlisted(job_detail: str, repo: str) -> None:
    read = read_detail(job_detail)
    assert read is not None and read.detail() == job_detail
    owner, name = repo.split("/")
    assert re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", owner) and re.fullmatch(r"[A-Za-z0-9_.-]{1,100}", name)
    assert owner not in (".", "..") and name not in (".", "..")


@settings(max_examples=300, deadline=None)
@given(after=_SHA, before=_SHA, commits=st.lists(_COMMIT, max_size=25) | _ANY, forced=_ANY,
       ref=st.sampled_from(["refs/heads/master", "refs/heads/main", "master"]) | _ANY,
       branch=st.sampled_from(["master", "main"]) | _ANY, name=st.text(max_size=30) | _ANY,
       installation=st.integers() | _ANY)
def test_property_a_push_payload_makes_at_most_one_allowlisted_job(after, before, commits, forced, ref, branch, name,
                                                                   installation):
    data = push()
    data.update(after=after, before=before, commits=commits, forced=forced, ref=ref, installation={"id": installation})
    data["repository"].update(default_branch=branch, full_name=name)
    jobs = candidates("push", data)
    assert len(jobs) <= 1
    for job in jobs:
        read = read_detail(job.spec.automatic.detail)
        assert read == ConfigRead("push", after, read.commit) and read.commit in ("", *[
            c["id"] for c in commits if isinstance(c, dict)])
        assert data["ref"] == f"refs/heads/{branch}" and after != "0" * 40
        assert type(job.spec.installation_id) is int and job.spec.installation_id > 0
        _allowlisted(job.spec.automatic.detail, job.spec.repo)
        assert JobSpec.from_dict(job.spec.to_dict()) == job.spec


@settings(max_examples=300, deadline=None)
@given(listed=st.lists(st.fixed_dictionaries({"full_name": st.text(max_size=30) | st.sampled_from(
    ["octo/one", "octo/..", "o/r\n"]), "id": _ANY | st.integers()}) | _ANY, max_size=5) | _ANY,
       action=st.sampled_from(["created", "added", "deleted"]) | _ANY,
       event=st.sampled_from(["installation", "installation_repositories"]))
def test_property_an_installation_payload_makes_only_allowlisted_jobs(listed, action, event):
    data = make.installation_created() if event == "installation" else make.repositories_added()
    data.update(action=action, repositories=listed, repositories_added=listed)
    jobs = candidates(event, data)
    assert len(jobs) <= MAX_REPOSITORIES
    for job in jobs:
        assert job.spec.automatic.detail == "installation"
        assert job.spec.repo in [item.get("full_name") for item in listed if isinstance(item, dict)]
        assert all(part not in (".", "..", "") for part in job.spec.repo.split("/"))
        assert type(job.spec.repo_id) is int and job.spec.repo_id > 0
        _allowlisted(job.spec.automatic.detail, job.spec.repo)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_property_a_detail_read_back_is_one_the_intake_could_write(detail):
    read = read_detail(detail)
    if read is not None:
        assert read.detail() == detail


# ---- through the webhook's intake: one job per repository, a redelivery queues nothing

def _accepted(db, event: str, data: dict, delivery: str) -> dict:
    response = asyncio.run(intake.accept(db, sansio.Event(data, event=event, delivery_id=delivery),
                                         outsider_window_s=3600, handle="bot"))
    assert response.status_code == 202
    return json.loads(response.body)


def test_the_webhook_queues_one_config_job_for_a_push_and_none_for_its_redelivery(backend):
    db = database()
    assert _accepted(db, "push", push(), "d-1")["queued"] is True
    assert _accepted(db, "push", push(), "d-2")["queued"] is False  # the same push under a new delivery id
    [row] = db.query("SELECT kind, conversation, spec FROM jobs")
    assert (row["kind"], row["conversation"]) == ("episode", "Codertocat/Hello-World config")
    assert JobSpec.from_json(row["spec"]).automatic.kind == "config"


def test_the_webhook_queues_one_config_job_per_installed_repository(backend):
    db = database()
    answer = _accepted(db, "installation", make.installation_created([("octo/one", 11), ("octo/two", 12)]), "d-3")
    assert len(answer["jobs"]) == 2
    assert _accepted(db, "installation", make.installation_created([("octo/one", 11)]), "d-3")["queued"] is False
    assert sorted(row["conversation"] for row in db.query("SELECT conversation FROM jobs")) == [
        "octo/one config", "octo/two config"]


def test_the_webhook_ignores_a_push_to_another_branch(backend):
    db = database()
    assert _accepted(db, "push", push(branch="feature"), "d-4")["queued"] is False
    assert db.query("SELECT 1 FROM jobs") == []
