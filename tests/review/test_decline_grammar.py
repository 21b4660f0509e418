"""bot/review/verdicts.py: the replies that decline a finding or reopen it are a declared grammar
(the first line is a known phrase, alone or before an explanation); every other reply says nothing."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.review.verdicts import ASKS_TO_FIX, DECLINE, DECLINE_PHRASES, REOPEN, SUBJECTS, classify

ENDINGS = ("", ".", "!", "...")
SEPARATORS = (": ", ". ", " - ", " — ", "; ")
NEGATIONS = ("not ", "never ", "is not ", "isn't ", "don't ", "no longer ", "hardly ", "not really ")
EXPLANATIONS = ("the API says so", "see the RFC", "we need it for #12", "")


@pytest.mark.parametrize("reply", ["Won't fix", "won’t fix.", "WONTFIX", "Intended.", "by design",
                                   "Not a bug: the API says so", "this is on purpose", "False positive!",
                                   "Declined - the old name stays", "intended\n\nThe caller checks first.",
                                   "Won't fix: not a bug either"])
def test_a_clear_declining_phrase_on_the_first_line_declines(reply):
    assert classify(reply) == DECLINE


@pytest.mark.parametrize("reply", ["this is not intended, please fix", "Good catch, fixing it",
                                   "> won't fix\n\nWhy would we not fix this?", "I don't think this is intended",
                                   "`wontfix`", "**won't fix**", "Won't fix: kidding, please fix",
                                   "intended, please fix", "not intended", "It was intended to add, not subtract",
                                   "Why? Won't fix", "<!-- -->won't fix", ""])
def test_a_reply_that_is_not_a_clear_decline_declines_nothing(reply):
    assert classify(reply) != DECLINE


@pytest.mark.parametrize("reply", ["Reopen", "please fix", "Do fix this.", "this is not intended, please fix",
                                   "It's a bug: the total is wrong", "re-open: I was wrong"])
def test_a_clear_reopening_phrase_reopens(reply):
    assert classify(reply) == REOPEN


def test_only_the_first_line_is_read():
    assert classify("Thanks for the review.\nWon't fix") is None


def test_a_long_reply_is_read_only_up_to_its_bound():
    assert classify("Won't fix: " + "x" * 1_000_000) == DECLINE
    assert classify(" " * 1_000_000 + "won't fix") is None


phrases = st.sampled_from(DECLINE_PHRASES)
subjects = st.sampled_from(("", *(f"{s} " for s in SUBJECTS)))
cases = st.sampled_from((str.lower, str.upper, str.title, str.capitalize, lambda s: s))


@st.composite
def declines(draw) -> str:
    """A reply from the grammar: [subject] phrase [ending | separator explanation] [more lines]."""
    head = draw(cases)(draw(subjects) + draw(phrases))
    tail = draw(st.one_of(st.sampled_from(ENDINGS),
                          st.builds(lambda s, e: s + e, st.sampled_from(SEPARATORS), st.sampled_from(EXPLANATIONS))))
    more = draw(st.sampled_from(("", "\n\nThe caller checks it first.", "\nsee #3")))
    return head + tail + more


@settings(max_examples=300, deadline=None)
@given(declines())
def test_every_reply_of_the_grammar_declines(reply):
    assert classify(reply) == DECLINE


@settings(max_examples=300, deadline=None)
@given(declines(), st.sampled_from(NEGATIONS))
def test_a_negated_phrase_never_declines(reply, negation):
    first, _, rest = reply.partition("\n")
    lowered = first.lower()
    subject = next((s for s in sorted(SUBJECTS, key=len, reverse=True) if lowered.startswith(s + " ")), "")
    cut = len(subject) + (1 if subject else 0)
    negated = first[:cut] + negation + first[cut:]
    assert classify(negated + "\n" + rest) != DECLINE


@settings(max_examples=300, deadline=None)
@given(declines(), st.sampled_from(("> ", ">", "`", "**", "_", "- ", "* ", "1. ", "# ", "<b>", "\"", "'",
                                    "@bot ", "why ", "I think ", "maybe ", "if ")))
def test_a_quoted_or_prefixed_phrase_never_declines(reply, prefix):
    assert classify(prefix + reply) != DECLINE


@settings(max_examples=300, deadline=None)
@given(declines(), st.sampled_from(ASKS_TO_FIX))
def test_a_first_line_that_also_asks_for_a_fix_never_declines(reply, reopen):
    first, _, rest = reply.partition("\n")
    assert classify(f"{first.rstrip('.!')}: {reopen}\n{rest}") != DECLINE


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=200))
def test_any_text_declines_only_when_its_first_line_starts_with_a_declared_phrase(text):
    if classify(text) == DECLINE:
        first = next(line for line in text.replace("\r", "\n").split("\n") if line.strip())
        words = " ".join(first.lower().replace("’", "'").split())
        words = next((words[len(s) + 1:] for s in SUBJECTS if words.startswith(s + " ")), words)
        assert any(words.startswith(p) for p in DECLINE_PHRASES), text
