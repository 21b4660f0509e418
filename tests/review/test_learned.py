"""bot/review/learned.py: a kind of finding writers declined on two pull requests becomes a rule
candidate; a maintainer approves, edits or discards it; an approved one withholds the finding. On
SQLite and PostgreSQL (migration 9)."""
from __future__ import annotations

import pytest

from bot import db as bot_db
from bot.review import learned, memory
from bot.review.findings import Finding
from bot.review.memory import Posted
from tests.entry_settings import current
from tests.store.conftest import backend, pg_url  # noqa: F401 - the two-backend fixtures

pytestmark = pytest.mark.usefixtures("backend")
SHA = "a" * 40
DOCSTRING = "Missing docstring on this test function."


def declined(db, number: int, path: str = "tests/test_a.py", title: str = DOCSTRING, *, via: str | None = "reply",
             comment_id: int | None = None) -> None:
    memory.remember(db, "o/r", number, ["codex"], SHA, 500 + number,
                    [Posted("codex", comment_id or 100 + number, path, 3, None, "RIGHT", "nit", "f" * 16, title)])
    [finding] = [f for f in memory.findings(db, "o/r", number) if f.path == path]
    memory.mark(db, [finding.id], memory.DECLINED, "declined", via=via)


def test_a_kind_declined_on_two_pull_requests_becomes_a_candidate_with_its_threads():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    assert learned.propose(db, "o/r") == []
    declined(db, 2, "tests/test_b.py", "Nit: missing docstring on this test function")
    [candidate] = learned.propose(db, "o/r")
    assert (candidate.folder, candidate.state) == ("tests", learned.CANDIDATE)
    assert sorted(e.number for e in candidate.evidence) == [1, 2]
    assert "tests/" in candidate.wording and "missing docstring" in candidate.wording.lower()


def test_declines_on_one_pull_request_teach_nothing():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 1, "tests/test_b.py")
    assert learned.propose(db, "o/r") == [] and learned.listed(db, "o/r") == []


def test_the_same_text_in_another_folder_is_another_kind():
    db = bot_db.connect(settings=current())
    declined(db, 1, "tests/test_a.py")
    declined(db, 2, "src/app.py")
    assert learned.propose(db, "o/r") == []


def test_a_decline_without_a_writers_signal_teaches_nothing():
    db = bot_db.connect(settings=current())
    declined(db, 1, via=None)  # recorded before the permission gate: judged again, not learned from
    declined(db, 2)
    assert learned.propose(db, "o/r") == []


def test_a_kind_is_proposed_once_and_a_discarded_one_never_again():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 2)
    [candidate] = learned.propose(db, "o/r")
    assert learned.decide(db, "o/r", candidate.id, learned.DISCARD, "maint") is not None
    declined(db, 3)
    assert learned.propose(db, "o/r") == [] and learned.listed(db, "o/r") == []


def test_an_approved_rule_withholds_the_finding_under_its_folder_only():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 2)
    [candidate] = learned.propose(db, "o/r")
    assert learned.approved(db, "o/r") == []  # nothing applies before a maintainer approves
    learned.decide(db, "o/r", candidate.id, learned.APPROVE, "maint")
    [rule] = learned.approved(db, "o/r")
    assert rule.withholds(Finding("codex", "tests/unit/test_c.py", 9, "RIGHT", "Missing docstring on this test function!"))
    assert not rule.withholds(Finding("codex", "src/app.py", 9, "RIGHT", DOCSTRING))
    assert not rule.withholds(Finding("codex", "tests/test_c.py", 9, "RIGHT", "add() subtracts: it must add."))


def test_an_edit_changes_the_wording_and_folder_and_approves():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 2)
    [candidate] = learned.propose(db, "o/r")
    edited = learned.decide(db, "o/r", candidate.id, learned.APPROVE, "maint", wording="No docstrings in tests.",
                            folder="")
    assert edited is not None and (edited.wording, edited.folder, edited.state) == ("No docstrings in tests.", "",
                                                                                     learned.APPROVED)
    [rule] = learned.approved(db, "o/r")
    assert rule.withholds(Finding("codex", "src/app.py", 9, "RIGHT", DOCSTRING))
    assert rule.as_rule().text == "No docstrings in tests." and rule.as_rule().applies_to("src/app.py")


@pytest.mark.parametrize("folder", ["../x", "/abs", "a//b", "a/./b", "x" * 201, "a\nb", "a b/", "a\\b"])
def test_an_edit_outside_the_folder_grammar_is_refused(folder):
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 2)
    [candidate] = learned.propose(db, "o/r")
    with pytest.raises(learned.RuleEditRefused):
        learned.decide(db, "o/r", candidate.id, learned.APPROVE, "maint", folder=folder)
    assert learned.approved(db, "o/r") == []


def test_a_decision_on_another_repositorys_candidate_does_nothing():
    db = bot_db.connect(settings=current())
    declined(db, 1)
    declined(db, 2)
    [candidate] = learned.propose(db, "o/r")
    assert learned.decide(db, "o/other", candidate.id, learned.APPROVE, "maint") is None
    assert learned.approved(db, "o/r") == []
