"""`automations:` in `.github/bot.yml`: what is declared parses, anything else is refused with the
config error naming the key and its line (bot/workspace/repo_config_model.py)."""
from __future__ import annotations

import re

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters import base as adapters
from bot.workspace.repo_config import ConfigError, RepoConfig, parse
from bot.workspace.repo_config_model import AUTOMATION_MAY, CONCLUSIONS, ISSUE_TYPES, PULL_TYPES

SLUGS = st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,20}\Z")
CRONS = st.sampled_from(["0 6 * * 1", "*/15 * * * *", "0 0 1 * *", "30 2 * * 1-5", "0 0,12 * * *"])


def _subset(values: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(values), min_size=1, max_size=len(values), unique=True)


TRIGGERS = st.one_of(
    _subset(ISSUE_TYPES).map(lambda t: {"issues": {"types": t}}),
    st.just({"issue_comment": {}}),
    _subset(PULL_TYPES).map(lambda t: {"pull_request": {"types": t}}),
    _subset(CONCLUSIONS).map(lambda c: {"check_suite": {"conclusion": c}}),
    _subset(CONCLUSIONS).map(lambda c: {"workflow_run": {"conclusion": c}}),
    st.lists(CRONS, min_size=1, max_size=3).map(lambda cs: {"schedule": [{"cron": c} for c in cs]}),
    st.just({"fire": {}}))


@st.composite
def entries(draw, name=SLUGS):
    entry = {"name": draw(name), "on": draw(TRIGGERS), "agent": draw(st.sampled_from(adapters.names())),
             "prompt": draw(st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
                                    min_size=1, max_size=80).filter(str.strip))}
    if draw(st.booleans()):
        entry["may"] = draw(_subset(AUTOMATION_MAY))
    if draw(st.booleans()):
        entry["max_attempts"] = draw(st.integers(1, 10))
    return entry


def _file(items: list[dict]) -> str:
    return yaml.safe_dump({"automations": items}, sort_keys=False, allow_unicode=True)


def _refused(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse(text)
    return caught.value


@settings(max_examples=50, deadline=None)
@given(st.lists(entries(), min_size=1, max_size=4, unique_by=lambda e: e["name"]))
def test_valid_automations_parse_as_written(items):
    cfg = parse(_file(items))
    assert [a.name for a in cfg.automations] == [e["name"] for e in items]
    for automation, entry in zip(cfg.automations, items, strict=True):
        assert automation.on.event == next(iter(entry["on"]))
        assert set(automation.may) == set(entry.get("may", ["comment"]))
        assert automation.max_attempts == entry.get("max_attempts", 2)


BAD_VALUES = {"name": st.sampled_from(["Has Caps", "-lead", "", "a" * 64, "x_y", 3]),
              "agent": st.sampled_from(["copilot", "", 7, None]),
              "prompt": st.sampled_from(["", "   ", "x" * 8_001, 5, None]),
              "may": st.sampled_from([["merge"], ["comment", "admin"], [], "write", [1]]),
              "max_attempts": st.sampled_from([0, 11, -1, True, "2", 2.5]),
              "on": st.sampled_from([{}, {"push": {}}, {"issues": {"types": ["deleted"]}}, "issues",
                                     {"fire": {"x": 1}}, {"schedule": [{"cron": "* * *"}]},
                                     {"issues": {}, "fire": {}}, {"check_suite": {"conclusion": ["red"]}}])}


@settings(max_examples=70, deadline=None)
@given(entries(), st.sampled_from(sorted(BAD_VALUES)), st.data())
def test_a_bad_value_is_refused_naming_its_key(entry, key, data):
    entry[key] = data.draw(BAD_VALUES[key])
    error = _refused(_file([entry]))
    assert error.key is not None and error.key.startswith(f"automations.0.{key}")
    assert error.line is not None


@settings(max_examples=60, deadline=None)
@given(entries(), st.from_regex(r"\A[a-z_]{1,12}\Z").filter(
    lambda k: k not in ("name", "on", "agent", "prompt", "may", "max_attempts")))
def test_an_unknown_key_is_refused_naming_it_and_its_line(entry, key):
    entry[key] = "x"
    text = _file([entry])
    error = _refused(text)
    assert error.key == f"automations.0.{key}" and "unknown automation key" in error.reason
    written = [n for n, line in enumerate(text.splitlines(), 1) if re.match(rf"^\s+'?{key}'?:", line)]
    assert [error.line] == written


@settings(max_examples=40, deadline=None)
@given(entries(), st.sampled_from(["name", "on", "agent", "prompt"]))
def test_a_missing_required_key_is_refused_naming_it(entry, key):
    del entry[key]
    error = _refused(_file([entry]))
    assert error.key == f"automations.0.{key}" and error.reason == "is required"


def test_two_automations_with_one_name_are_refused():
    entry = {"name": "triage", "on": {"fire": {}}, "agent": "claude", "prompt": "p"}
    assert "used twice" in _refused(_file([entry, entry])).reason


def test_a_bare_on_key_reads_as_on_as_in_github_actions():
    text = "automations:\n  - name: t\n    on:\n      issues: {types: [opened]}\n    agent: claude\n    prompt: p\n"
    assert parse(text).automations[0].on.event == "issues"


def test_a_repository_without_automations_declares_none():
    assert parse("mode: strict\n").automations == () == RepoConfig().automations


def test_reviews_rules_and_quiet_still_parse_beside_automations():
    cfg = parse('reviews:\n  rules: {"api/**": Validate input.}\n  quiet: false\n' + _file(
        [{"name": "t", "on": {"fire": {}}, "agent": "claude", "prompt": "p"}]))
    assert cfg.reviews.rules == (("api/**", "Validate input."),) and cfg.reviews.quiet is False


FILTER_VALUES = st.one_of(st.text(max_size=60), st.integers(), st.none(),
                          st.lists(st.one_of(st.text(max_size=60), st.integers()), max_size=22))


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["labels", "branches"]), FILTER_VALUES)
def test_a_pull_request_filter_parses_only_within_its_allowlist(key, value):
    entry = {"name": "f", "on": {"pull_request": {"types": ["opened"], key: value}}, "agent": "codex", "prompt": "p"}
    try:
        found = getattr(parse(_file([entry])).automations[0].on.pull_request, key)
    except ConfigError as error:
        assert error.key == f"automations.0.on.pull_request.{key}" and error.line is not None
        return
    assert 1 <= len(found) <= 20
    for item in found:
        if key == "labels":
            assert 1 <= len(item) <= 50 and item == item.strip() and not re.search(r"[\x00-\x1f\x7f-\x9f]", item)
        else:
            assert re.fullmatch(r"[A-Za-z0-9._/*-]{1,255}", item) and ".." not in item and "//" not in item


def test_declared_pull_request_filters_parse_as_written():
    entry = {"name": "f", "on": {"pull_request": {"types": ["labeled"], "labels": ["bug", "needs triage"],
                                                  "branches": ["main", "release/*"]}}, "agent": "codex", "prompt": "p"}
    on = parse(_file([entry])).automations[0].on.pull_request
    assert on.labels == ("bug", "needs triage") and on.branches == ("main", "release/*")
