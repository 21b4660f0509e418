"""`max_usd_per_day` of an automation in `.github/bot.yml` (issue 35): a number of US dollars from
0.01 to 10,000, 10 when not set; anything else is refused naming the key and its line."""
from __future__ import annotations

import math

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.workspace.repo_config import ConfigError, parse

ENTRY = {"name": "triage", "on": {"issues": {"types": ["opened"]}}, "agent": "codex", "prompt": "Say what it is."}
IN_RANGE = st.one_of(st.integers(1, 10_000), st.floats(0.01, 10_000, allow_nan=False, allow_infinity=False))
OUT_OF_RANGE = st.one_of(
    st.integers(max_value=0), st.integers(min_value=10_001),
    st.floats(max_value=0.0099999), st.floats(min_value=10_000.0001),
    st.just(math.nan), st.just(math.inf), st.booleans(), st.none(),
    st.text(max_size=12), st.lists(st.integers(1, 5), max_size=2), st.dictionaries(st.text(max_size=3), st.integers()))


def _file(value: object) -> str:
    return yaml.safe_dump({"automations": [dict(ENTRY, max_usd_per_day=value)]}, sort_keys=False)


def test_an_automation_that_sets_no_money_cap_has_ten_dollars_a_day():
    assert parse(yaml.safe_dump({"automations": [ENTRY]})).automations[0].max_usd_per_day == 10.0


@settings(max_examples=80, deadline=None)
@given(IN_RANGE)
def test_a_money_cap_from_a_cent_to_ten_thousand_dollars_parses_as_written(value):
    assert parse(_file(value)).automations[0].max_usd_per_day == float(value)


@settings(max_examples=120, deadline=None)
@given(OUT_OF_RANGE)
def test_any_other_money_cap_is_refused_naming_the_key_and_its_line(value):
    text = _file(value)
    with pytest.raises(ConfigError) as caught:
        parse(text)
    written = [n for n, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith("max_usd_per_day:")]
    assert caught.value.key == "automations.0.max_usd_per_day" and [caught.value.line] == written
    assert "US dollars from 0.01 to 10000" in caught.value.reason
