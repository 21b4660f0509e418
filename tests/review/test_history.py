"""bot/review/history.py and followup.py: what a re-review makes of the earlier findings."""
from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from types import SimpleNamespace

from bot.review import memory
from bot.review.findings import Finding
from bot.review.followup import fixed_findings
from bot.review.history import History, recall, sift
from bot.review.memory import Earlier, Posted
from bot.review.merge import merge
from bot.review.since import Change
from bot.service import store
from bot.workspace.git import pinned_env

OPEN = Earlier(1, "codex", 11, "a" * 40, "app.py", 3, None, "RIGHT", "important", "", "add() subtracts", "open")


def test_a_finding_one_agent_calls_fixed_and_another_still_present_stays_open():
    history = History(Change("a" * 40, ["app.py"]), [OPEN])
    assert fixed_findings(history, [{1: "fixed"}, {1: "still_present"}]) == []
    assert fixed_findings(history, [{1: "fixed"}, {}]) == [OPEN]


def test_a_finding_repeating_an_open_one_on_a_shifted_line_is_not_new():
    again = merge([Finding("claude", "app.py", 9, "RIGHT", "add() subtracts", severity="important")], ["claude"])
    sifted = sift(again, History(Change(None), [OPEN]))
    assert sifted.repeated == again and sifted.new == []


class Threads:
    own_logins = frozenset({"bot[bot]"})

    def __init__(self, nodes: list[dict]):
        self.repo, self.number, self.nodes = "o/r", 2, nodes

    async def review_threads(self) -> list[dict]:
        return self.nodes


async def writer(login: str) -> bool:
    """The permission check, answering that everyone may (tests/review/test_signal_authority.py asks GitHub)."""
    return True


def repository(tmp_path: Path) -> SimpleNamespace:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=tmp_path,
                              check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q", "-b", "main")
    (tmp_path / "app.py").write_text("a\n")
    git("add", ".")
    git("commit", "-qm", "c")
    head = git("rev-parse", "HEAD")
    return SimpleNamespace(base_sha=head, admin_dir=tmp_path / ".git", repo_env=lambda: pinned_env(tmp_path / ".git"))


def test_a_thread_resolved_by_a_person_without_a_change_is_declined_and_the_agent_missing_reviews_whole(tmp_path):
    (tmp_path / "repo").mkdir()
    worktree = repository(tmp_path / "repo")
    db = store.connect(tmp_path / "bot.db")
    memory.remember(db, "o/r", 2, ["codex"], worktree.base_sha, 5,
                    [Posted("codex", 11, "app.py", 1, None, "RIGHT", "nit", "f" * 16, "rename")])
    node = {"id": "PRRT_11", "isResolved": True, "resolvedBy": {"login": "alice"},
            "comments": {"nodes": [{"databaseId": 11, "authorAssociation": "NONE", "body": "Nit: rename",
                                    "author": {"login": "bot"}}]}}
    past = asyncio.run(recall(db, Threads([node]), worktree, ["codex", "claude"], start_over=False, may=writer))
    assert [e.state for e in past.declined] == ["declined"] and past.open == [] and past.newly_declined == 1
    assert past.change.reason == "claude has not reviewed this pull request yet"


def test_review_all_and_agents_that_reviewed_different_commits_review_whole_and_say_why(tmp_path):
    (tmp_path / "repo").mkdir()
    worktree = repository(tmp_path / "repo")
    db = store.connect(tmp_path / "bot.db")
    memory.remember(db, "o/r", 2, ["codex"], "b" * 40, 5, [])
    memory.remember(db, "o/r", 2, ["claude"], "c" * 40, 6, [])
    started_over = asyncio.run(recall(db, Threads([]), worktree, ["codex"], start_over=True, may=writer))
    differ = asyncio.run(recall(db, Threads([]), worktree, ["codex", "claude"], start_over=False, may=writer))
    assert started_over.change.reason == "`review all` was asked"
    assert differ.change.reason == "the agents last reviewed different commits"
