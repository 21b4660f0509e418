"""The intake reads a webhook payload as the typed dictionaries of bot/intake/github_payload.py,
checked at the door (bot/intake/payload.py:read_payload): every payload GitHub recorded reads into
them, and a payload whose read part is mutated to another type is refused as Malformed, never a
crash further in."""
from __future__ import annotations

import copy
import json
import typing
from pathlib import Path
from types import UnionType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.intake import github_payload
from bot.intake.decide import Episode, Event, Ignore, Reply, decide
from bot.intake.payload import Malformed, read_payload
from tests.automations import payloads as built

SHARED = Path("/work/shared/data/github/webhooks")  # octokit's recorded examples (its README says which)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github"  # the suite's copies


def _recorded() -> list[tuple[str, str, dict]]:
    """(event, file, payload) of every recorded payload: the shared set by its folders, the
    suite's copies by their names (`<event>.<action>.json`)."""
    found = [(path.parent.name, f"{path.parent.name}/{path.name}", path) for path in sorted(SHARED.glob("*/*.json"))]
    found += [(path.name.split(".")[0], path.name, path) for path in sorted(FIXTURES.glob("*.json"))]
    return [(event, name, json.loads(path.read_text())) for event, name, path in found]


RECORDED = _recorded()
# the events the recordings hold none of, as tests/automations/payloads.py builds them (checked there
# against GitHub's webhook schemas)
BUILT = [("check_suite", built.check_suite()), ("workflow_run", built.workflow_run()),
         ("dependabot_alert", built.dependabot_alert()), ("code_scanning_alert", built.code_scanning_alert()),
         ("issue_comment", built.comment("@bot codex fix it")), ("pull_request", built.pull_request("labeled", "bot:review"))]


def test_the_recorded_payloads_are_there():
    events = {event for event, _, _ in RECORDED}
    assert events >= {"issue_comment", "issues", "pull_request", "pull_request_review", "pull_request_review_comment",
                      "workflow_run"}
    if SHARED.is_dir():  # octokit's whole set, where this machine holds it (the suite's copies elsewhere)
        assert len(RECORDED) >= 86 + 12 and "installation" in events


@pytest.mark.parametrize(("event", "name", "data"), RECORDED, ids=[name for _, name, _ in RECORDED])
def test_every_recorded_payload_reads_into_its_typed_dictionary(event, name, data):
    assert read_payload(event, data) is data  # the door checks; it copies nothing


@pytest.mark.parametrize(("event", "data"), BUILT, ids=[event for event, _ in BUILT])
def test_every_built_payload_of_an_event_the_recordings_lack_reads_into_its_typed_dictionary(event, data):
    assert read_payload(event, data) is data


def _comment_payload() -> dict:
    return built.comment("@bot codex fix it")


def test_a_read_part_of_another_type_is_malformed_and_named():
    data = _comment_payload()
    data["comment"]["user"]["login"] = 7
    with pytest.raises(Malformed, match=r"comment\.user\.login is int, not str"):
        read_payload("issue_comment", data)


def test_a_boolean_is_not_a_number():
    data = _comment_payload()
    data["issue"]["number"] = True
    with pytest.raises(Malformed, match=r"issue\.number is bool"):
        read_payload("issue_comment", data)


def test_null_passes_only_where_github_sends_it():
    data = _comment_payload()
    data["comment"]["body"] = None  # a comment's body may be null
    read_payload("issue_comment", data)
    data["comment"]["id"] = None
    with pytest.raises(Malformed, match=r"comment\.id is null, not int"):
        read_payload("issue_comment", data)


def test_each_element_of_a_read_list_is_checked():
    data = built.check_suite()
    data["check_suite"]["pull_requests"].append({"number": "3"})
    with pytest.raises(Malformed, match=r"check_suite\.pull_requests\[\]\.number is str"):
        read_payload("check_suite", data)


def test_a_part_the_event_is_not_read_for_is_not_checked():
    data = _comment_payload()
    data["check_suite"] = 5  # an issue_comment's check_suite is never read
    data["comment"]["reactions"] = "anything"  # nor a field no TypedDict declares
    assert read_payload("issue_comment", data) is data


def test_an_event_the_intake_does_not_act_on_is_read_for_its_action_only():
    assert read_payload("push", {"repository": "not read", "ref": 1}) == {"repository": "not read", "ref": 1}
    with pytest.raises(Malformed, match="action is int"):
        read_payload("push", {"action": 1})


def test_the_decision_refuses_a_mistyped_payload_before_anything_else():
    data = _comment_payload()
    data["installation"] = {"id": "1"}
    with pytest.raises(Malformed, match=r"installation\.id is str"):
        decide(Event("issue_comment", data, delivery="d-1"), "bot")


# ---------------------------------------------------------------- the property

def _declared(hint: object) -> object:
    """The one non-null type a declaration allows."""
    members = typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)
    [kind] = [member for member in members if member is not type(None)]
    return kind


def _read_paths(value: object, hint: object, path: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], bool]]:
    """Every place under `value` with whether the intake reads it (declared in the TypedDicts)."""
    kind = _declared(hint) if hint is not None else None
    found: list[tuple[tuple[str | int, ...], bool]] = [(path, hint is not None)] if path else []
    if isinstance(value, dict):
        fields = typing.get_type_hints(kind) if kind is not None and typing.is_typeddict(kind) else {}
        for key, inner in value.items():
            found += _read_paths(inner, fields.get(key), (*path, key))
    elif isinstance(value, list):
        element = typing.get_args(kind)[0] if kind is not None and typing.get_origin(kind) is list else None
        for index, inner in enumerate(value[:3]):
            found += _read_paths(inner, element, (*path, index))
    return found


def _places(event: str, data: dict) -> list[tuple[tuple[str | int, ...], bool]]:
    parts = typing.get_type_hints(github_payload.Payload)
    read = github_payload.READ.get(event, github_payload.OTHERS)
    return [found for key, value in data.items()
            for found in _read_paths(value, parts[key] if key in read else None, (key,))]


# the acted-on payloads: a command, an automatic trigger, an automation candidate of each kind
ACTED_ON = [(event, data) for event, data in BUILT] + [
    (event, data) for event, name, data in RECORDED if name in (
        "issue_comment.created.json", "pull_request.opened.json", "pull_request_review.submitted.json",
        "pull_request_review_comment.created.json", "issues.opened.json", "pull_request.synchronize.json")]
JSON_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 2**40), st.text(max_size=20),
                        st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


def _kind(value: object) -> type:
    return type(value)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTED_ON), st.data())
def test_a_mutated_payload_is_decided_or_refused_as_malformed_never_a_crash(case, data):
    event, original = case
    mutated = copy.deepcopy(original)
    mutated.setdefault("installation", {"id": 1})
    for comment_like in ("comment", "review"):
        if isinstance(mutated.get(comment_like), dict):
            mutated[comment_like]["body"] = data.draw(st.sampled_from(["@bot codex fix it", "@bot help", "thanks"]))
    path, read = data.draw(st.sampled_from(_places(event, mutated)))
    holder = mutated
    for step in path[:-1]:
        holder = holder[step]
    before = holder[path[-1]]
    if data.draw(st.booleans()) and isinstance(holder, dict):
        del holder[path[-1]]
        after: object = None
        removed = True
    else:
        after = holder[path[-1]] = data.draw(JSON_VALUES)
        removed = False
    try:
        decision = decide(Event(event, mutated, delivery="d-1"), "bot")
    except Malformed:
        return
    assert isinstance(decision, (Ignore, Reply, Episode))
    # a read part turned into another kind of value (not null, not removed) never gets this far
    mistyped = read and not removed and after is not None and before is not None and _kind(after) is not _kind(before)
    assert not mistyped, f"{'.'.join(map(str, path))}: {before!r} -> {after!r} was decided"
