"""Learned rules in a review (bot/review/history.py): a writer's decline on a second pull request
proposes a candidate as it is recorded; an approved rule withholds its finding whatever the agent
does; nothing is learned from people without write permission."""
from __future__ import annotations

import asyncio
import functools
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.review import learned, memory
from bot.review.findings import Finding
from bot.review.history import History, recall, sift
from bot.review.memory import Posted
from bot.review.merge import merge
from bot.review.since import Change
from bot.service import store
from tests.review.test_history import repository

DOCSTRING = "Missing docstring on this test function."


class Threads:
    own_logins = frozenset({"bot[bot]"})

    def __init__(self, number: int, nodes: list[dict], author: str = "author"):
        self.repo, self.number, self.nodes, self.author = "o/r", number, nodes, author

    async def review_threads(self) -> list[dict]:
        return self.nodes

    async def pull(self) -> dict:
        return {"user": {"login": self.author}}


def node(comment_id: int, login: str, how: str) -> dict:
    """A review thread of the bot's comment where `login` declined it by a reply or a resolution."""
    replies = [{"databaseId": comment_id, "authorAssociation": "NONE", "body": DOCSTRING,
                "author": {"login": "bot[bot]"}}]
    if how == "reply":
        replies.append({"databaseId": comment_id + 1, "authorAssociation": "MEMBER", "body": "Won't fix: tests",
                        "author": {"login": login}})
    return {"id": f"PRRT_{comment_id}", "isResolved": how == "resolution",
            "resolvedBy": {"login": login} if how == "resolution" else None, "comments": {"nodes": replies}}


def may(writers: set[str]):
    async def check(login: str) -> bool:
        return login in writers
    return check


def posted_on(db, worktree, number: int) -> int:
    comment_id = 100 * number
    memory.remember(db, "o/r", number, ["codex"], worktree.base_sha, 500 + number,
                    [Posted("codex", comment_id, f"tests/test_{number}.py", 3, None, "RIGHT", "nit", "f" * 16,
                            DOCSTRING)])
    return comment_id


def review(db, worktree, number: int, login: str, how: str, writers: set[str]):
    comment_id = posted_on(db, worktree, number)
    return asyncio.run(recall(db, Threads(number, [node(comment_id, login, how)]), worktree, ["codex"],
                              start_over=False, may=may(writers)))


def test_a_writers_decline_on_a_second_pull_request_proposes_a_candidate_as_it_is_recorded(tmp_path):
    (tmp_path / "repo").mkdir()
    worktree, db = repository(tmp_path / "repo"), store.connect(tmp_path / "bot.db")
    review(db, worktree, 1, "alice", "reply", {"alice"})
    assert learned.listed(db, "o/r") == []
    review(db, worktree, 2, "bob", "resolution", {"alice", "bob"})
    [candidate] = learned.listed(db, "o/r")
    assert candidate.state == learned.CANDIDATE and [e.comment_id for e in candidate.evidence] == [100, 200]


def test_a_read_only_members_declines_teach_nothing(tmp_path):
    (tmp_path / "repo").mkdir()
    worktree, db = repository(tmp_path / "repo"), store.connect(tmp_path / "bot.db")
    review(db, worktree, 1, "reader", "reply", {"alice"})
    review(db, worktree, 2, "reader", "resolution", {"alice"})
    assert learned.listed(db, "o/r", (learned.CANDIDATE, learned.APPROVED, learned.DISCARDED)) == []


def test_an_approved_rule_reaches_the_review_and_the_agents(tmp_path):
    (tmp_path / "repo").mkdir()
    worktree, db = repository(tmp_path / "repo"), store.connect(tmp_path / "bot.db")
    review(db, worktree, 1, "alice", "reply", {"alice"})
    review(db, worktree, 2, "alice", "reply", {"alice"})
    [candidate] = learned.listed(db, "o/r")
    before = asyncio.run(recall(db, Threads(3, []), worktree, ["codex"], start_over=False, may=may({"alice"})))
    learned.decide(db, "o/r", candidate.id, learned.APPROVE, "maint")
    after = asyncio.run(recall(db, Threads(3, []), worktree, ["codex"], start_over=False, may=may({"alice"})))
    assert before.learned == [] and [r.id for r in after.learned] == [candidate.id]
    assert after.learned[0].as_rule().applies_to("tests/test_9.py")


def test_a_finding_an_approved_rule_covers_is_withheld_even_when_the_agent_raises_it():
    rule = learned.Learned(1, "o/r", "tests", "missing docstring on this test function", "No docstrings in tests.",
                           learned.APPROVED, ())
    raised = merge([Finding("codex", "tests/test_x.py", 4, "RIGHT", DOCSTRING, severity="nit"),
                    Finding("codex", "src/app.py", 4, "RIGHT", DOCSTRING, severity="nit")], ["codex"])
    sifted = sift(raised, History(Change(None), learned=[rule]))
    assert [m.finding.path for m in sifted.learned] == ["tests/test_x.py"]
    assert [m.finding.path for m in sifted.new] == ["src/app.py"]


def test_the_review_says_how_many_findings_a_learned_rule_withheld():
    from bot.review import followup

    rule = learned.Learned(1, "o/r", "tests", "missing docstring on this test function", "No docstrings in tests.",
                           learned.APPROVED, ())
    raised = merge([Finding("codex", "tests/test_x.py", 4, "RIGHT", DOCSTRING, severity="nit")], ["codex"])
    history = History(Change(None), learned=[rule])
    lines = followup.notes(history, sift(raised, history), [], "a" * 40)
    assert "1 finding withheld: the repository's approved learned rules cover it." in lines


@functools.cache
def _shared_repository() -> object:
    where = Path(tempfile.mkdtemp(prefix="learned-prop-"))
    return repository(where)


SIGNALS = st.lists(st.tuples(st.sampled_from(["alice", "reader", "outsider"]), st.sampled_from(["reply", "resolution"])),
                   min_size=1, max_size=4)


@settings(max_examples=25, deadline=None)
@given(SIGNALS)
def test_nothing_is_learned_from_people_without_write_permission(signals):
    """Random (permission, signal) on successive pull requests: a candidate exactly when a writer
    declined on two of them."""
    worktree = _shared_repository()
    with tempfile.TemporaryDirectory() as where:
        db = store.connect(Path(where) / "bot.db")
        for number, (login, how) in enumerate(signals, start=1):
            review(db, worktree, number, login, how, {"alice"})
        by_writers = sum(1 for login, _ in signals if login == "alice")
        assert bool(learned.listed(db, "o/r")) == (by_writers >= 2)
