"""`.github/bot.yml` `reviews.rules:` maps path globs (gitignore style, `**` for any depth) to
instructions, and `reviews.quiet` says whether a review with nothing to say leaves no comment. The
globs are a declared grammar (bot/workspace/rule_globs.py): anything else is refused with the
existing config-error reporting, naming the key and its line."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.workspace import rule_globs
from bot.workspace.repo_config import ConfigError, parse

NAME = st.text(alphabet="abcxyz_.-0123456789", min_size=1, max_size=6).filter(lambda s: s not in (".", ".."))
COMPONENT = st.one_of(NAME, st.just("*"), st.just("**"), NAME.map(lambda s: f"*{s}"), NAME.map(lambda s: f"{s}?"))
GLOB = st.builds(lambda parts, lead, trail: ("/" if lead else "") + "/".join(parts) + ("/" if trail else ""),
                 st.lists(COMPONENT, min_size=1, max_size=4), st.booleans(), st.booleans())


def test_rules_map_globs_to_instructions_in_the_order_written():
    reviews = parse('reviews:\n  rules:\n    "api/**": Every handler validates its input.\n'
                    '    "**/tests/**": Do not flag missing docstrings.\n').reviews
    assert reviews.rules == (("api/**", "Every handler validates its input."),
                             ("**/tests/**", "Do not flag missing docstrings."))


def test_reviews_are_quiet_by_default_and_quiet_false_is_read():
    assert parse("").reviews.quiet is True
    assert parse("reviews:\n  quiet: false\n").reviews.quiet is False


@pytest.mark.parametrize("glob, problem", [("api/[ab]/**", "character"), ("!api/**", "negation"),
                                           ("api\\x", "character"), ("a/../b", "`..`"), ("a//b", "empty"),
                                           ("#notes", "comment"), ("x" * 300, "longer")])
def test_a_glob_outside_the_grammar_is_refused_naming_it(glob, problem):
    with pytest.raises(ConfigError, match=problem) as refused:
        parse(f"reviews:\n  rules:\n    '{glob}': Check it.\n")
    assert refused.value.key == "reviews.rules" and refused.value.line == 2


@pytest.mark.parametrize("body", ['    "api/**": ""\n', '    "api/**": [a, b]\n', '    "api/**": 12\n',
                                  '    "api/**":\n'])
def test_an_instruction_that_is_not_a_text_is_refused(body):
    with pytest.raises(ConfigError, match="instruction"):
        parse("reviews:\n  rules:\n" + body)


@pytest.mark.parametrize("rules", ["[api/**]", "api/**", "12"])
def test_rules_that_are_not_a_mapping_are_refused(rules):
    with pytest.raises(ConfigError, match="mapping of path globs"):
        parse(f"reviews:\n  rules: {rules}\n")


def test_a_key_that_is_not_text_is_refused():
    with pytest.raises(ConfigError, match="not a path glob"):
        parse("reviews:\n  rules:\n    12: Check it.\n")


def test_too_many_rules_or_too_long_an_instruction_is_refused():
    many = "".join(f'    "d{i}/**": Check it.\n' for i in range(rule_globs.MAX_CONFIG_RULES + 1))
    with pytest.raises(ConfigError, match="at most"):
        parse("reviews:\n  rules:\n" + many)
    with pytest.raises(ConfigError, match="characters"):
        parse(f'reviews:\n  rules:\n    "api/**": {"x" * (rule_globs.MAX_INSTRUCTION_CHARS + 1)}\n')


@settings(max_examples=300, deadline=None)
@given(GLOB)
def test_every_glob_of_the_grammar_is_accepted(glob):
    assert rule_globs.problem(glob) is None


@settings(max_examples=300, deadline=None)
@given(GLOB, st.sampled_from("[]\\\0\n\r\t"), st.integers(min_value=0))
def test_a_glob_with_a_character_outside_the_grammar_is_refused(glob, bad, where):
    spot = where % (len(glob) + 1)
    assert rule_globs.problem(glob[:spot] + bad + glob[spot:]) is not None


@pytest.mark.parametrize("glob, path, matched", [
    ("api/**", "api/handlers/user.py", True), ("api/**", "v1/api/x.py", False), ("api/**", "api", False),
    ("**/tests/**", "tests/test_a.py", True), ("**/tests/**", "pkg/tests/unit/test_a.py", True),
    ("**/tests/**", "pkg/tests.py", False), ("*.py", "a/b/c.py", True), ("*.py", "c.pyc", False),
    ("api", "api/x.py", True), ("api", "v1/api/x.py", True), ("api/", "api", False), ("api/", "api/x.py", True),
    ("/api", "v1/api/x.py", False), ("docs/*.md", "docs/a.md", True), ("docs/*.md", "docs/x/a.md", False),
    ("a/**/b", "a/b", True), ("a/**/b", "a/x/y/b", True), ("a/**/b", "a/x/c", False), ("?.c", "x/a.c", True),
    ("*.py", "x/.hidden.py", True), ("src/*/main.go", "src/cmd/main.go", True)])
def test_globs_match_as_gitignore_does(glob, path, matched):
    assert rule_globs.matches(glob, path) is matched
