"""Property: random cache entries (the restore's own generator: the grammar plus mutations and odd
files) against random thread markers, written by the bot or by a person, valid or garbage. After
the step's restore the thread's spend is never below the largest valid marker of the bot's, and it
is exactly what the bot's valid markers alone give: nothing a person wrote, and no garbage, raises it."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.cli import action
from bot.cli import action_spend_floor as spend_floor
from bot.config import Settings
from bot.service import store
from tests.action.test_cache_restore_property import _spent, _write_entry, entries, file_kinds, wrong
from tests.action.test_restored_values import KEY, REQUESTER
from tests.action.test_spend_floor import BOT, OWN

tokens = st.integers(0, spend_floor.MAX_THREAD_TOKENS)
usd = st.floats(0, spend_floor.MAX_THREAD_USD, allow_nan=False)


def _marker(payload: object) -> str:
    return f"<!-- bot:run {json.dumps(payload, separators=(',', ':'))} -->"


def _payload(spent_tokens: int, spent_usd: float) -> dict:
    return {"conversation": KEY, "backend": "codex", "session": None, "run": "r",
            "spend": {"tokens": spent_tokens, "usd": spent_usd}}


def _valid_tokens(value: object) -> bool:
    return type(value) is int and 0 <= value <= spend_floor.MAX_THREAD_TOKENS


def _valid_usd(value: object) -> bool:
    return type(value) in (int, float) and value == value and 0 <= value <= spend_floor.MAX_THREAD_USD  # type: ignore[operator]


# a value its field refuses (`wrong` alone may draw a valid one: 1 tokens, 0.0 dollars)
WRONG_FOR = {"tokens": wrong.filter(lambda v: not _valid_tokens(v)), "usd": wrong.filter(lambda v: not _valid_usd(v))}


@st.composite
def garbage(draw) -> str:
    """A marker the grammar refuses: a field given a wrong value, an unknown key, another thread,
    not JSON, or a valid one quoted inside the answer's text instead of after it."""
    payload = _payload(draw(tokens), draw(usd))
    how = draw(st.sampled_from(["tokens", "usd", "spend", "unknown", "conversation", "text", "quoted"]))
    if how in ("tokens", "usd"):
        payload["spend"][how] = draw(WRONG_FOR[how])
    elif how == "spend":
        payload["spend"] = draw(wrong)
    elif how == "unknown":
        payload["spend"][draw(st.text(min_size=1, max_size=6).filter(lambda k: k not in ("tokens", "usd")))] = draw(wrong)
    elif how == "conversation":
        payload["conversation"] = draw(st.sampled_from(["other/repo#1", f"{KEY}0", ""]))
    elif how == "text":
        return f"Done.\n<!-- bot:run {draw(st.text(max_size=40))} -->"
    else:
        return f"Done: {_marker(payload)} and more.\n<details>x</details>"
    return f"Done.\n{_marker(payload)}"


valid = st.builds(lambda t, u: (t, u), tokens, usd)
authors = st.sampled_from([(BOT, "Bot"), ("bot[bot]", "Bot"), ("mallory", "User"), (BOT, "User"),
                           ("other-app[bot]", "Bot")])
comments = st.lists(st.tuples(authors, st.one_of(valid, garbage())), max_size=8)


def _comment(author: tuple[str, str], what: object) -> dict:
    body = f"Done.\n{_marker(_payload(*what))}" if isinstance(what, tuple) else what
    return {"body": body, "user": {"login": author[0], "type": author[1]}}


def _bots_valid(thread: list[tuple[tuple[str, str], object]]) -> list[tuple[int, float]]:
    return [what for (login, kind), what in thread if kind == "Bot" and login in OWN and isinstance(what, tuple)]


def _step(root: Path, entry: dict, kind: str, thread: list[dict]) -> tuple[int, float]:
    """The step's restore: the cache entry, then the thread's floor; the thread's spend after."""
    folder, data_dir = root / "cache", root / "data"
    folder.mkdir(parents=True)
    _write_entry(folder, entry, kind)
    step_settings = Settings(dict(os.environ, BOT_DATA_DIR=str(data_dir)))
    db = store.connect(settings=step_settings)
    action.restore_session(db, KEY, folder, step_settings, REQUESTER)
    action.keep_floor(db, KEY, spend_floor.read(thread, KEY, OWN))
    return _spent(data_dir)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=entries, kind=file_kinds, thread=comments)
def test_a_restore_keeps_the_bots_largest_marker_and_nothing_else_raises_it(entry, kind, thread):
    with tempfile.TemporaryDirectory() as root:
        after = _step(Path(root) / "all", entry, kind, [_comment(a, w) for a, w in thread])
        ours = [((BOT, "Bot"), what) for what in _bots_valid(thread)]
        alone = _step(Path(root) / "ours", entry, kind, [_comment(a, w) for a, w in ours])
    best = _bots_valid(thread)
    assert after[0] >= max((t for t, _ in best), default=0)
    assert after[1] >= max((u for _, u in best), default=0.0) * (1 - 1e-12) - 1e-9
    assert after == alone
