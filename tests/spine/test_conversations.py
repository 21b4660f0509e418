"""Conversations: the session map and the recap a fresh session gets."""
from __future__ import annotations

from types import SimpleNamespace

from bot.job import conversations
from bot.service import store
from tests.entry_settings import current


def test_turns_are_counted_and_session_id_kept():
    """A resumed turn bumps the count; the session id stays."""
    db = store.connect(settings=current())
    conversations.record_turn(db, "o/r#1", "codex", "s-1", fresh=True)
    conversations.record_turn(db, "o/r#1", "codex", "s-1", fresh=False)
    session = conversations.session(db, "o/r#1", "codex")
    assert (session.session_id, session.turns) == ("s-1", 2)


def test_fresh_session_restarts_the_count():
    """`new` (or a lost session) replaces the id and starts counting again."""
    db = store.connect(settings=current())
    conversations.record_turn(db, "o/r#1", "codex", "s-1", fresh=True)
    conversations.record_turn(db, "o/r#1", "codex", "s-2", fresh=True)
    assert conversations.session(db, "o/r#1", "codex").turns == 1


def test_each_agent_keeps_its_own_session():
    """One thread can talk to several agents; each has its own session."""
    db = store.connect(settings=current())
    conversations.record_turn(db, "o/r#1", "codex", "c-1", fresh=True)
    conversations.record_turn(db, "o/r#1", "claude", "k-1", fresh=True)
    assert [(s.agent, s.session_id) for s in conversations.sessions(db, "o/r#1")] == [("claude", "k-1"), ("codex", "c-1")]


def test_recap_keeps_answers_without_their_provenance():
    """The recap shows people's comments and the bot's answers, minus the provenance block."""
    comments = [{"user": {"login": "alice"}, "body": "@bot codex why?"},
                {"user": {"login": "bot[bot]", "type": "Bot"}, "body": "Because.\n\n<details>x</details>\n<!-- bot:run {} -->"}]
    text = conversations.recap(comments, "bot")
    assert "@alice wrote:\n@bot codex why?" in text and "Because." in text and "<details>" not in text


def test_recap_leaves_out_the_hidden_job_marker():
    """A reply that carries the bot's hidden job marker is recapped without it."""
    comments = [{"user": {"login": "bot[bot]", "type": "Bot"}, "body": "Nothing is running in this thread.\n<!-- bot:job 3 -->"}]
    text = conversations.recap(comments, "bot")
    assert "Nothing is running in this thread." in text and "<!--" not in text


class FakeThread:
    repo, number = "o/r", 7

    async def issue(self):
        return {"title": "Crash on start", "body": "Traceback: boom"}

    async def comments(self):
        return [{"user": {"login": "alice"}, "body": "seen on 3.12 too"}]


async def test_fresh_prompt_carries_the_issue_and_comments():
    """A first turn sees the issue itself and the thread, then the request."""
    ctx = SimpleNamespace(thread=FakeThread(), request="find the cause", requester="alice", repo="o/r",
                          number=7, is_pr=False, settings=current())
    text = await conversations.prompt(ctx, resumed=False, fresh_reason=None)
    assert "Issue #7: Crash on start" in text and "Traceback: boom" in text and "seen on 3.12 too" in text
    assert text.endswith("find the cause")


async def test_resumed_prompt_is_just_the_request():
    """A resumed session already has the context: only the new request is sent."""
    ctx = SimpleNamespace(thread=FakeThread(), request="and now?", requester="alice", repo="o/r", number=7, is_pr=False)
    assert await conversations.prompt(ctx, resumed=True, fresh_reason=None) == "and now?"


def test_rejected_key_on_resume_is_not_taken_for_a_lost_session():
    """An auth failure of a resumed run is reported as it is, not retried as a fresh session."""
    from bot.job.pipeline import _session_lost
    auth = SimpleNamespace(ok=False, text="", failure="auth")
    lost = SimpleNamespace(ok=False, text="", failure="session_unknown")
    silent = SimpleNamespace(ok=False, text="", failure="exit")
    assert (_session_lost(auth), _session_lost(lost), _session_lost(silent)) == (False, True, False)
