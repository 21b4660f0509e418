"""Commands that act but are not episodes, run by the worker in process against the fake GitHub:
every one passes GitHub's permission check first, and a kind without a handler is refused."""
from __future__ import annotations

from bot.service import store
from tests.entry_settings import current
from tests.spine.helpers import enqueue
from tests.spine.service import REPO
from tests.spine.test_worker import drain, gh, spec  # noqa: F401  (gh: the fixture)


def bot_comments(fake) -> list[str]:
    return [c["body"] for c in fake.comments(REPO, 1) if c["user"]["login"] == "bot[bot]"]


async def test_a_command_without_a_handler_is_refused_and_never_run(gh):  # noqa: F811
    """A job kind the worker does not know (a command added to the grammar but not to the
    worker) ends with a refusal, not with whatever a default would do."""
    db = store.connect(settings=current())
    gh.add_comment(REPO, 1, "@bot frobnicate", comment_id=77)
    enqueue(db, "frobnicate", f"{REPO}#1", spec(author="Codertocat"))
    rows = await drain(db, 1)
    assert rows[0]["status"] == "done"
    assert any("I don't know how to do `frobnicate`" in body for body in bot_comments(gh))


async def test_refusals_to_a_member_without_permission_are_capped_per_thread(gh):  # noqa: F811
    """A read-only member repeating `@bot stop` is told once per window, not once per stop."""
    db = store.connect(settings=current())
    gh.set_permission(REPO, "reader", "read")
    gh.add_comment(REPO, 1, "@bot stop", user="reader", comment_id=77)
    for _ in range(3):
        enqueue(db, "stop", f"{REPO}#1", spec(author="reader", kind="stop"))
    await drain(db, 3)
    assert len([body for body in bot_comments(gh) if "only people with" in body]) == 1


async def test_a_writers_stop_flags_the_threads_episodes_with_their_login(gh):  # noqa: F811
    db = store.connect(settings=current())
    gh.set_permission(REPO, "alice", "write")
    gh.add_comment(REPO, 1, "@bot stop", user="alice", comment_id=77)
    episode = enqueue(db, "episode", f"{REPO}#2", spec())
    store.update_job(db, episode, status="running", lease_owner="elsewhere", lease_expires=1e12)
    enqueue(db, "stop", f"{REPO}#2", {**spec(author="alice", kind="stop"), "number": 1})
    await drain(db, 1)
    row = store.get_job(db, episode)
    assert (row["cancel_requested"], row["stopped_by"]) == (1, "alice")
