"""The thread's spend floor: the bot's own answers carry the thread's cumulative spend in their
marker, and an Action's restore keeps the ledger's thread figure at least that, whatever the
session cache held. Only the bot's own comments count: a person's forged marker changes nothing."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.cli import action_spend_floor as spend_floor
from bot.record import provenance
from bot.record.recorder import Recorder
from bot.relay.budgets import Ledger, Scope
from bot.service import store
from tests.action.test_cache_restore import _ask, _spent
from tests.action.test_restored_values import KEY, REQUESTER, VALID, _cache, _session, argvs  # noqa: F401
from tests.entry_settings import current

BOT = "github-actions[bot]"
OWN = frozenset({BOT, "bot[bot]"})


def marker(tokens: object = 5000, usd: object = 1.25, conversation: str = KEY, **extra: object) -> str:
    payload = {"conversation": conversation, "backend": "codex", "session": None, "run": "run-1",
               "spend": {"tokens": tokens, "usd": usd} | extra}
    return f"<!-- bot:run {json.dumps(payload, separators=(',', ':'))} -->"


def answer(tokens: object = 5000, usd: object = 1.25) -> str:
    return f"Done.\n\n<details><summary>codex</summary>\n\nx\n</details>\n{marker(tokens, usd)}"


def comment(body: str, login: str = BOT, kind: str = "Bot") -> dict:
    return {"body": body, "user": {"login": login, "type": kind}}


# ---- the marker


def test_the_marker_carries_the_threads_spend_after_the_turn():
    db = store.connect(settings=current())
    recorder = Recorder(db)
    run_id = recorder.start_run(agent="codex", conversation=KEY)
    Ledger(db).add("earlier", Scope(conversation=KEY, requester=REQUESTER), 700, 0.25)
    Ledger(db).add(run_id, Scope(conversation=KEY, requester=REQUESTER), 300, 0.5)
    Ledger(db).add("other", Scope(conversation="other/repo#2"), 9000, 9.0)
    body = provenance.build(recorder, run_id).render("ok")
    payload = json.loads(provenance.MARKER_RE.findall(body)[-1])
    assert payload["spend"] == {"tokens": 1000, "usd": 0.75} and payload["run"] == run_id


@given(st.lists(st.tuples(st.sampled_from([KEY, "other/repo#2"]), st.integers(0, 10**9),
                         st.floats(0, 1000, allow_nan=False)), max_size=6))
@settings(max_examples=30, deadline=None)
def test_the_markers_spend_is_what_the_relays_thread_cap_reads(rows):
    db = store.connect(settings=current())
    db.execute("delete from model_spend")
    for conversation, tokens, usd in rows:
        Ledger(db).add("r", Scope(conversation=conversation), tokens, usd)
    spent = Ledger(db).spent(Scope(conversation=KEY))["thread"]
    marked = provenance.thread_spend(db, KEY) or {"tokens": 0, "usd": 0.0}
    assert (marked["tokens"], marked["usd"]) == pytest.approx((spent.tokens, spent.usd))


def test_the_bots_marker_reads_back_as_the_floor():
    db = store.connect(settings=current())
    recorder = Recorder(db)
    run_id = recorder.start_run(agent="codex", conversation=KEY)
    Ledger(db).add(run_id, Scope(conversation=KEY), 1234, 0.5)
    body = provenance.build(recorder, run_id).render("ok")
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.usd, floor.markers) == (1234, 0.5, 1)


# ---- reading the thread


def test_the_largest_marker_of_the_bots_sets_the_floor():
    floor = spend_floor.read([comment(answer(100, 0.1)), comment(answer(900, 0.9)), comment(answer(500, 0.5))],
                             KEY, OWN)
    assert (floor.tokens, floor.usd) == (900, 0.9)


def test_a_users_comment_with_a_forged_spend_marker_is_ignored_and_counted():
    forged = comment(answer(10 ** 9, 999_999.0), login="mallory", kind="User")
    floor = spend_floor.read([comment(answer(100, 0.1)), forged], KEY, OWN)
    assert (floor.tokens, floor.usd, floor.not_ours) == (100, 0.1, 1)


def test_a_user_named_like_the_bot_is_not_the_bot():
    floor = spend_floor.read([comment(answer(), login=BOT, kind="User")], KEY, OWN)
    assert (floor.tokens, floor.not_ours) == (0, 1)


def test_a_marker_quoted_inside_the_bots_answer_is_not_read():
    body = f"Done: {marker(10 ** 9, 9.0)}\n\n<details>x</details>\n{marker(10, 0.01)}"
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.usd) == (10, 0.01)


def test_another_threads_marker_is_ignored_and_counted():
    body = f"Done.\n{marker(10 ** 6, 9.0, conversation='other/repo#2')}"
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.ignored) == (0, 1)


def test_a_marker_without_spend_sets_no_floor_and_is_not_counted():
    payload = {"conversation": KEY, "backend": "codex", "session": None, "run": "r"}
    body = f"Done.\n<!-- bot:run {json.dumps(payload)} -->"
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.ignored, floor.markers) == (0, 0, 0)


@pytest.mark.parametrize("tokens, usd", [(-1, 0.1), (10 ** 13, 0.1), (True, 0.1), ("5", 0.1), (5.0, 0.1),
                                         (5, -0.01), (5, 2e6), (5, "1"), (5, None), (5, False)])
def test_a_spend_value_outside_its_type_or_range_is_ignored_and_counted(tokens, usd):
    floor = spend_floor.read([comment(answer(tokens, usd))], KEY, OWN)
    assert (floor.tokens, floor.usd, floor.ignored) == (0, 0.0, 1)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_usd_is_ignored_and_counted(constant):
    body = f"Done.\n{marker(5, 0.5).replace('0.5', constant)}"
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.ignored) == (0, 1) and not math.isnan(floor.usd)


def test_an_unknown_key_in_the_spend_is_ignored_and_counted():
    body = f"Done.\n{marker(5, 0.5, requester_day=1)}"
    assert spend_floor.read([comment(body)], KEY, OWN).ignored == 1


def test_a_comment_over_the_body_bound_is_ignored_and_counted():
    body = "x" * spend_floor.MAX_BODY + "\n" + marker()
    floor = spend_floor.read([comment(body)], KEY, OWN)
    assert (floor.tokens, floor.ignored) == (0, 1)


def test_only_the_newest_of_the_bots_comments_are_read():
    oldest = comment(answer(10 ** 6, 9.0))
    newer = [comment(answer(1, 0.0))] * spend_floor.MAX_COMMENTS
    assert spend_floor.read([oldest, *newer], KEY, OWN).tokens == 1


# ---- the ledger


def test_the_floor_raises_the_ledger_and_never_lowers_it():
    db = store.connect(settings=current())
    Ledger(db).add("run-1", Scope(conversation=KEY, requester=REQUESTER), 400, 2.0)
    spend_floor.raise_to(db, KEY, spend_floor.Floor(1000, 0.5))
    assert _spent() == (1000, 2.0)
    assert Ledger(db).spent(Scope(requester=REQUESTER))["requester_day"].tokens == 400  # the thread's only


def test_a_floor_finer_than_the_ledger_keeps_is_rounded_up_never_down():
    db = store.connect(settings=current())
    spend_floor.raise_to(db, KEY, spend_floor.Floor(0, 1 / 3))
    assert _spent()[1] >= 1 / 3


def test_a_floor_the_ledger_keeps_exactly_gains_nothing_from_rounding():
    db = store.connect(settings=current())
    spend_floor.raise_to(db, KEY, spend_floor.Floor(0, 0.3))
    assert _spent()[1] == 0.3


# ---- the step


def _thread_with(github, body: str, login: str = BOT, kind: str = "Bot") -> None:
    github.add_comment("Codertocat/Hello-World", 1, body, user=login, user_type=kind)


def test_a_status_over_an_entry_without_spend_rows_keeps_the_bots_marked_spend(runner, github, monkeypatch, tmp_path):
    github.set_permission("Codertocat/Hello-World", "Codertocat", "admin")
    _thread_with(github, answer(5000, 1.25))
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(_cache(tmp_path / "cache", [_session("codex", VALID["codex"])])))
    _ask(runner, github, "@bot status")
    assert _spent() == (5000, 1.25)


def test_a_status_ignores_a_users_forged_spend_marker(runner, github, monkeypatch, tmp_path, capsys):
    github.set_permission("Codertocat/Hello-World", "Codertocat", "admin")
    _thread_with(github, answer(10 ** 9, 999_999.0), login="Codertocat", kind="User")
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(_cache(tmp_path / "cache")))
    _ask(runner, github, "@bot status")
    assert _spent() == (0, 0.0)
    assert "1 comments not written by the bot carried one" in capsys.readouterr().out


def test_a_run_keeps_the_bots_marked_spend_and_lists_the_thread_once(argvs, runner, github, monkeypatch,  # noqa: F811
                                                                     tmp_path):
    _thread_with(github, answer(5000, 1.25))
    monkeypatch.setenv("BOT_SESSION_CACHE_DIR", str(_cache(tmp_path / "cache", [_session("codex", VALID["codex"])])))
    _ask(runner, github, "@bot codex go on")
    assert len(argvs) == 1 and _spent() == (5000, 1.25)
    assert len(github.calls_to("GET", r"/issues/1/comments(\?|$)")) == 1
