"""Who may change what the bot remembers of a review: a reply that declines or reopens a finding, a
thread resolved or unresolved, counts only when GitHub says its author has the permission
`.github/bot.yml` requires of a command (bot/job/authority.py, write by default)."""
from __future__ import annotations

import asyncio
import subprocess
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.job import authority
from bot.permissions import PERMISSION_LEVELS
from bot.review import memory
from bot.review.followup import notes
from bot.review.history import Sifted, recall
from bot.review.memory import Posted
from bot.service import store
from bot.workspace.git import pinned_env
from bot.workspace.repo_config import RepoConfig

COMMENT = 11
WRITERS = ("write", "maintain", "admin")
BELOW_WRITE = ("none", "read", "triage")


class PullThread:
    """A pull request's review threads and its people's permissions, as GitHub answers them."""

    own_logins = frozenset({"bot[bot]"})

    def __init__(self, node: dict, permissions: dict[str, str], author: str = "Codertocat"):
        self.repo, self.number, self.node, self.permissions, self.author = "o/r", 2, node, permissions, author
        self.asked: list[str] = []

    async def review_threads(self) -> list[dict]:
        return [self.node]

    async def permission(self, login: str, *, fresh: bool = False) -> str:
        self.asked.append(login)
        if self.permissions.get(login) == "outage":
            raise ConnectionError("GitHub is down")
        return self.permissions.get(login, "none")

    async def pull(self) -> dict:
        return {"user": {"login": self.author}}


def node(*replies: tuple[str, str], resolved_by: str | None = None, resolved: bool = False) -> dict:
    comments = [{"databaseId": COMMENT, "authorAssociation": "NONE", "body": "Nit: rename", "author": {"login": "bot"}}]
    comments += [{"databaseId": COMMENT + 1 + i, "authorAssociation": "MEMBER", "body": body,
                  "author": {"login": login}} for i, (login, body) in enumerate(replies)]
    return {"id": f"PRRT_{COMMENT}", "isResolved": resolved or resolved_by is not None,
            "resolvedBy": {"login": resolved_by} if resolved_by else None, "comments": {"nodes": comments}}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def repository(where: Path) -> SimpleNamespace:
    """Two commits: `before` has app.py as first posted, the head changed it."""
    where.mkdir(parents=True)
    git(where, "init", "-q", "-b", "main")
    (where / "app.py").write_text("a\n")
    git(where, "add", ".")
    git(where, "commit", "-qm", "first")
    before = git(where, "rev-parse", "HEAD")
    (where / "app.py").write_text("b\n")
    git(where, "commit", "-qam", "second")
    head = git(where, "rev-parse", "HEAD")
    return SimpleNamespace(base_sha=head, before=before, admin_dir=where / ".git",
                           repo_env=lambda: pinned_env(where / ".git"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> SimpleNamespace:
    return repository(tmp_path_factory.mktemp("signals") / "repo")


def remembered(where: Path, worktree: SimpleNamespace, state: str = memory.OPEN, via: str | None = None,
               changed_since: bool = False):
    """A database holding one finding on app.py, posted at the head (or before it: its file changed since)."""
    db = store.connect(where / f"{uuid.uuid4().hex}.db")
    posted_at = worktree.before if changed_since else worktree.base_sha
    memory.remember(db, "o/r", 2, ["codex"], posted_at, 5,
                    [Posted("codex", COMMENT, "app.py", 1, None, "RIGHT", "nit", "f" * 16, "rename")])
    if state != memory.OPEN:
        [earlier] = memory.findings(db, "o/r", 2)
        memory.mark(db, [earlier.id], state, "earlier", via=via)
    return db


def judged(db, worktree, thread: PullThread, cfg: RepoConfig | None = None):
    may = authority.may_signal(thread, cfg or RepoConfig())
    return asyncio.run(recall(db, thread, worktree, ["codex"], start_over=False, may=may))


def state_of(db) -> tuple[str, str | None]:
    row = db.query("SELECT state, declined_via FROM review_findings")[0]
    return row["state"], row["declined_via"]


def test_a_wont_fix_reply_by_a_read_only_member_leaves_the_finding_open(tmp_path, repo):
    db = remembered(tmp_path, repo)
    past = judged(db, repo, PullThread(node(("mallory", "won't fix")), {"mallory": "read"}))
    assert state_of(db) == (memory.OPEN, None) and past.declined == [] and past.ignored == 1


def test_a_thread_resolved_without_a_change_by_a_read_only_author_leaves_the_finding_open(tmp_path, repo):
    db = remembered(tmp_path, repo)
    judged(db, repo, PullThread(node(resolved_by="forker"), {"forker": "read"}, author="forker"))
    assert state_of(db) == (memory.OPEN, None)


def test_a_thread_resolved_after_a_change_by_a_read_only_person_is_not_marked_fixed(tmp_path, repo):
    db = remembered(tmp_path, repo, changed_since=True)
    judged(db, repo, PullThread(node(resolved_by="forker"), {"forker": "read"}, author="forker"))
    assert state_of(db) == (memory.OPEN, None)


def test_a_writer_resolving_the_thread_without_a_change_declines_it_and_after_a_change_fixes_it(tmp_path, repo):
    unchanged, changed = remembered(tmp_path, repo), remembered(tmp_path, repo, changed_since=True)
    judged(unchanged, repo, PullThread(node(resolved_by="alice"), {"alice": "write"}))
    judged(changed, repo, PullThread(node(resolved_by="alice"), {"alice": "write"}))
    assert state_of(unchanged) == (memory.DECLINED, memory.VIA_RESOLUTION)
    assert state_of(changed) == (memory.FIXED, None)


def test_an_owner_saying_this_is_not_intended_please_fix_declines_nothing(tmp_path, repo):
    db = remembered(tmp_path, repo)
    judged(db, repo, PullThread(node(("octocat", "this is not intended, please fix")), {"octocat": "admin"}))
    assert state_of(db) == (memory.OPEN, None)


def test_a_writer_saying_reopen_undoes_a_decline(tmp_path, repo):
    db = remembered(tmp_path, repo)
    thread = PullThread(node(("alice", "Won't fix")), {"alice": "write"})
    judged(db, repo, thread)
    assert state_of(db) == (memory.DECLINED, memory.VIA_REPLY)
    thread.node = node(("alice", "Won't fix"), ("bob", "Please fix: it breaks the totals"))
    thread.permissions["bob"] = "maintain"
    past = judged(db, repo, thread)
    assert state_of(db) == (memory.OPEN, None) and past.reopened == 1 and [e.id for e in past.open] == [1]


def test_a_read_only_reply_saying_reopen_does_not_undo_a_writers_decline(tmp_path, repo):
    db = remembered(tmp_path, repo, memory.DECLINED, memory.VIA_REPLY)
    judged(db, repo, PullThread(node(("alice", "Won't fix"), ("mallory", "reopen")),
                                {"alice": "write", "mallory": "read"}))
    assert state_of(db) == (memory.DECLINED, memory.VIA_REPLY)


def test_an_unresolved_thread_undoes_a_decline_by_resolution_when_only_writers_could_unresolve_it(tmp_path, repo):
    db = remembered(tmp_path, repo, memory.DECLINED, memory.VIA_RESOLUTION)
    judged(db, repo, PullThread(node(), {"alice": "write"}, author="alice"))
    assert state_of(db) == (memory.OPEN, None)


def test_an_unresolved_thread_keeps_the_decline_when_a_read_only_author_may_have_unresolved_it(tmp_path, repo):
    db = remembered(tmp_path, repo, memory.DECLINED, memory.VIA_RESOLUTION)
    judged(db, repo, PullThread(node(), {"forker": "read"}, author="forker"))
    assert state_of(db) == (memory.DECLINED, memory.VIA_RESOLUTION)


def test_a_decline_needs_the_permission_bot_yml_requires(tmp_path, repo):
    db = remembered(tmp_path, repo)
    judged(db, repo, PullThread(node(("alice", "won't fix")), {"alice": "write"}),
           RepoConfig(trigger_permissions=("maintain", "admin")))
    assert state_of(db) == (memory.OPEN, None)


def test_a_permission_github_cannot_tell_counts_as_none(tmp_path, repo):
    db = remembered(tmp_path, repo)
    judged(db, repo, PullThread(node(("alice", "won't fix")), {"alice": "outage"}))
    assert state_of(db) == (memory.OPEN, None)


def test_a_decline_recorded_under_the_old_rule_is_judged_again(tmp_path, repo):
    kept, reopened = (remembered(tmp_path, repo, memory.DECLINED) for _ in range(2))
    judged(kept, repo, PullThread(node(("alice", "won't fix")), {"alice": "write"}))
    judged(reopened, repo, PullThread(node(("mallory", "won't fix")), {"mallory": "read"}))
    assert state_of(kept) == (memory.DECLINED, memory.VIA_REPLY)
    assert state_of(reopened) == (memory.OPEN, None)


def test_people_asked_about_are_bounded_and_the_rest_count_as_none(tmp_path, repo):
    db = remembered(tmp_path, repo)
    crowd = [(f"user{i}", "won't fix") for i in range(40)]
    thread = PullThread(node(*crowd), {f"user{i}": "write" for i in range(40)})
    judged(db, repo, thread)
    assert len(set(thread.asked)) <= 20 and state_of(db) == (memory.DECLINED, memory.VIA_REPLY)


def test_the_review_says_how_many_signals_were_not_counted(tmp_path, repo):
    db = remembered(tmp_path, repo)
    past = judged(db, repo, PullThread(node(("mallory", "won't fix")), {"mallory": "read"}))
    assert any("not counted" in line and "write" in line for line in notes(past, Sifted(), [], repo.base_sha))


# the property: random people and signals against each starting state
DECLINING = ("won't fix", "Intended.", "Not a bug: see the RFC", "by design", "false positive")
REOPENING = ("reopen", "please fix", "this is not intended, please fix", "do fix")
NEUTRAL = ("thanks", "> won't fix", "I don't think this is intended")
SIGNALS = st.one_of(st.tuples(st.just("reply"), st.sampled_from(DECLINING + REOPENING + NEUTRAL)),
                    st.tuples(st.sampled_from(("resolve", "unresolve")), st.just("")))
STARTS = st.sampled_from(((memory.OPEN, None), (memory.DECLINED, memory.VIA_REPLY),
                          (memory.DECLINED, memory.VIA_RESOLUTION)))


def thread_after(start: tuple[str, str | None], signal: tuple[str, str], who: str, permission: str) -> PullThread:
    """The thread as it stands once `who` gave `signal` on a finding in state `start` (a writer, alice,
    made an earlier decline)."""
    kind, text = signal
    replies = [("alice", "won't fix")] if start[1] == memory.VIA_REPLY else []
    resolver = "alice" if start[1] == memory.VIA_RESOLUTION else None
    if kind == "reply":
        replies.append((who, text))
    elif kind == "resolve":
        resolver = who
    else:
        resolver = None
    author = who if kind == "unresolve" else "Codertocat"
    return PullThread(node(*replies, resolved_by=resolver), {"alice": "write", who: permission,
                                                             "Codertocat": "read"}, author=author)


@settings(max_examples=150, deadline=None)
@given(STARTS, SIGNALS, st.sampled_from(BELOW_WRITE), st.booleans())
def test_a_signal_from_someone_below_write_never_changes_what_is_remembered(tmp_path_factory, repo, start, signal,
                                                                           permission, changed_since):
    db = remembered(tmp_path_factory.mktemp("p"), repo, *start, changed_since=changed_since)
    judged(db, repo, thread_after(start, signal, "mallory", permission))
    assert state_of(db) == start


@settings(max_examples=150, deadline=None)
@given(STARTS, SIGNALS, st.sampled_from(WRITERS))
def test_a_writers_signal_does_what_it_says(tmp_path_factory, repo, start, signal, permission):
    db = remembered(tmp_path_factory.mktemp("p"), repo, *start)
    judged(db, repo, thread_after(start, signal, "bob", permission))
    kind, text = signal
    expected = start
    if kind == "reply" and text in DECLINING:
        expected = (memory.DECLINED, memory.VIA_REPLY)
    elif kind == "reply" and text in REOPENING:
        expected = (memory.OPEN, None)
    elif kind == "resolve" and start[0] == memory.OPEN:
        expected = (memory.DECLINED, memory.VIA_RESOLUTION)
    elif kind == "unresolve" and start[1] == memory.VIA_RESOLUTION:
        expected = (memory.OPEN, None)
    assert state_of(db) == expected, (start, signal)


def test_every_permission_level_is_covered_by_the_properties():
    assert set(WRITERS) | set(BELOW_WRITE) == {*PERMISSION_LEVELS, "none"}
