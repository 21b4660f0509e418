"""`may: [label]`: the bridge's add_labels tool is offered only to a run whose automation may label,
labels only the run's own issue, and only with labels the repository already has (read from the
fake GitHub's GET .../labels); anything else is refused, recorded, and never sent to GitHub."""
from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.automations import labels
from bot.bridge import label_tools
from bot.bridge.admission import Admission, Refusal
from bot.bridge.label_tools import MAX_NAME_CHARS, MAX_PER_CALL, MAX_PER_RUN, admit_names
from bot.bridge.server import BridgeServer
from bot.github.client import RetryingAPI, Thread
from bot.workspace.repo_config import parse
from tests.bridge.conftest import call, mcp_session, recorder, run_id, worktree  # noqa: F401
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
TRIAGE = ("automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
          "    prompt: Label the issue bug, feature or question.\n    may: [comment, label]\n")


def automation(may: str = "[comment, label]"):
    return parse(TRIAGE.replace("[comment, label]", may), ".github/bot.yml").automations[0]


@pytest.fixture
def gh():
    fake = FakeGitHub(require_auth=False).start()
    fake.add_repo(REPO)
    fake.add_issue(REPO, 7, title="It crashes")
    fake.add_issue(REPO, 8, title="Another issue")
    for name in ("bug", "Feature", "question"):
        fake.add_label(REPO, name)
    yield fake
    fake.stop()


@pytest.fixture
async def thread(gh):
    async with httpx.AsyncClient() as client:
        yield Thread(RetryingAPI(client, oauth_token="t", base_url=gh.url), REPO, 7)


@pytest.fixture
async def label_bridge(worktree, recorder, run_id, tmp_path, thread):  # noqa: F811
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                            labels=labels.for_run(automation(), thread)) as server:
        yield server


def outcomes(recorder, run_id) -> list[tuple[str, str]]:  # noqa: F811
    return [(e["tool"], e["outcome"]) for e in recorder.events(run_id) if e["kind"] == "tool_call"]


async def test_add_labels_is_not_offered_without_label_in_may(worktree, recorder, run_id, tmp_path, thread):  # noqa: F811
    assert labels.for_run(automation("[comment]"), thread) is None
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                            labels=labels.for_run(automation("[comment]"), thread)) as bridge:
        async with mcp_session(bridge.url, bridge.token) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]
        text, is_error = await call(bridge, "add_labels", labels=["bug"])
    assert "add_labels" not in listed and "add_labels" not in bridge.tool_names
    assert is_error and "not granted" in text
    assert outcomes(recorder, run_id) == [("add_labels", "refused:unknown_tool")]


async def test_a_command_run_has_no_labeler():
    assert labels.for_run(None, None) is None


async def test_add_labels_is_offered_when_the_automation_may_label(label_bridge):
    async with mcp_session(label_bridge.url, label_bridge.token) as session:
        assert "add_labels" in [tool.name for tool in (await session.list_tools()).tools]
    assert "add_labels" in label_bridge.bridge_for().tools


async def test_a_repository_label_is_added_to_the_runs_issue_in_its_spelling(label_bridge, gh, recorder, run_id):  # noqa: F811
    text, is_error = await call(label_bridge, "add_labels", labels=["BUG"])
    assert not is_error and "added bug" in text
    assert gh.labels_on(REPO, 7) == ["bug"] and gh.labels_on(REPO, 8) == []
    [posted] = gh.calls_to("POST", r"/issues/\d+/labels$")
    assert posted.path == f"/repos/{REPO}/issues/7/labels" and posted.body == {"labels": ["bug"]}
    assert outcomes(recorder, run_id) == [("add_labels", "ok")]
    assert gh.conformance_errors == []


async def test_a_label_not_in_the_repository_is_refused_recorded_never_created(label_bridge, gh, recorder, run_id):  # noqa: F811
    text, is_error = await call(label_bridge, "add_labels", labels=["bug", "urgent"])
    assert is_error and "'urgent' is not a label of this repository" in text and "bug, Feature, question" in text
    assert gh.calls_to("POST", r"/issues/\d+/labels$") == [] and gh.label_names(REPO) == ["bug", "Feature", "question"]
    assert outcomes(recorder, run_id) == [("add_labels", "refused:unknown_label")]
    [event] = [e for e in recorder.events(run_id) if e["kind"] == "tool_call"]
    assert "urgent" in str(event)


async def test_an_empty_list_answers_the_repositorys_labels_and_adds_nothing(label_bridge, gh):
    text, is_error = await call(label_bridge, "add_labels", labels=[])
    assert not is_error and text == "The repository's labels: bug, Feature, question."
    assert gh.calls_to("POST", r"/issues/\d+/labels$") == []


async def test_a_name_longer_than_a_label_is_refused_by_the_schema(label_bridge, gh):
    text, is_error = await call(label_bridge, "add_labels", labels=["b" * (MAX_NAME_CHARS + 1)])
    assert is_error and gh.calls_to("POST", r"/issues/\d+/labels$") == []


async def test_a_run_adds_at_most_its_cap_of_labels_whichever_episode(worktree, recorder, run_id, tmp_path, gh,  # noqa: F811
                                                                     thread):
    names = [f"area-{i}" for i in range(MAX_PER_RUN + 1)]
    for name in names:
        gh.add_label(REPO, name)
    labeler = labels.for_run(automation(), thread)
    for episode in ("first", "fallback"):  # a fallback agent's episode shares the run's labeler
        async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / episode,
                                labels=labeler) as bridge:
            text, is_error = await call(bridge, "add_labels", labels=names[:MAX_PER_CALL] if episode == "first"
                                        else names[MAX_PER_CALL:])
    assert is_error and f"at most {MAX_PER_RUN} labels" in text
    assert len(gh.labels_on(REPO, 7)) == MAX_PER_CALL


async def test_the_repositorys_labels_are_read_bounded(gh, thread):
    for i in range(labels.PER_PAGE * labels.MAX_PAGES + 50):
        gh.add_label(REPO, f"l{i}")
    known = await labels.RepoLabels(thread).known()
    assert len(known) == labels.PER_PAGE * labels.MAX_PAGES
    assert len(gh.calls_to("GET", r"/labels")) == labels.MAX_PAGES


KNOWN = ["bug", "Feature", "question", "good first issue", "ß-straße"]


@given(st.lists(st.text(max_size=MAX_NAME_CHARS + 5), max_size=MAX_PER_CALL + 3),
       st.sets(st.sampled_from(KNOWN), max_size=MAX_PER_RUN))
def test_admitted_names_are_only_the_repositorys_labels_bounded(asked, already):
    try:
        admitted = admit_names(asked, KNOWN, already=already)
    except Refusal as refused:
        assert refused.code in {"unknown_label", "too_many_labels", "label_budget"}
        return
    assert set(admitted) <= set(KNOWN) and len(admitted) == len(set(admitted)) <= MAX_PER_CALL
    assert len(set(admitted) | already) <= MAX_PER_RUN
    assert {name.casefold() for name in asked} == {name.casefold() for name in admitted}


@given(st.one_of(st.none(), st.integers(), st.text(), st.lists(st.one_of(st.integers(), st.none()), min_size=1)))
def test_labels_that_are_not_a_list_of_names_are_refused(asked):
    with pytest.raises(Refusal):
        label_tools.admit_names(asked, KNOWN)
