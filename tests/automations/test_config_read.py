"""The worker's side of a config job (bot/automations/config_read.py, config_refusal.py) against the
fake GitHub: a valid file is stored, an invalid one is refused once on its commit, naming its line,
and the last valid one stays in force; a file gone forgets the automations."""
from __future__ import annotations

import datetime as dt
import threading

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.automations import config_read, config_refusal
from bot.github.client import TokenCache, installation_thread
from bot.intake.config_event import candidates
from bot.record.defang import markers
from bot.service.schedules import tick
from bot.workspace.repo_config import ConfigError
from tests.automations import config_payloads
from tests.automations.config_payloads import CONFIG, commit, patch
from tests.entry_settings import current, database
from tests.spine.helpers import configure_app
from tests.spine.service import REPO, seeded_github

WEEKLY = (b"automations:\n  - name: deps\n    on:\n      schedule: [{cron: \"*/5 * * * *\"}]\n"
          b"    agent: codex\n    prompt: Update the dependencies.\n")
BAD = WEEKLY + b"    colour: red\n"  # line 7: an unknown key
A, B = "a" * 40, "b" * 40
MONDAY_6 = dt.datetime(2026, 12, 7, 6, 0, tzinfo=dt.UTC)
COMMENTS = rf"/repos/{REPO}/commits/[0-9a-f]{{40}}/comments$"


@pytest.fixture
def gh(monkeypatch):
    fake = seeded_github()
    configure_app(monkeypatch, api_url=fake.url)
    yield fake
    fake.stop()


async def _read(db, data: dict, event: str = "push", job_id: int = 7) -> None:
    [job] = candidates(event, data)
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await installation_thread(client, TokenCache.of(current()), 1, job.spec.repo, 0,
                                           frozenset({"bot[bot]"}))
        assert await config_read.run(db, job_id, job.spec, thread) == "done"


def _push(sha: str, repo: str = REPO) -> dict:
    return config_payloads.push(after=sha, commits=[commit(sha, modified=(CONFIG,))], repo=repo)


def _stored(db) -> str | None:
    rows = db.query("SELECT text FROM automation_configs WHERE repo = ?", [REPO])
    return rows[0]["text"] if rows else None


async def test_a_valid_file_pushed_is_stored_and_its_schedule_runs(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, WEEKLY)
    await _read(db, _push(A))
    assert _stored(db) == WEEKLY.decode() and gh.commit_comments(REPO) == []
    assert tick(db, MONDAY_6) == [(REPO, "deps", "2026-12-07T06:00Z")]


async def test_an_invalid_file_pushed_gets_one_comment_on_its_line_and_the_last_valid_one_stays(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, WEEKLY)
    await _read(db, _push(A))
    gh.add_content(REPO, CONFIG, BAD)
    gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: patch(WEEKLY, BAD)})
    await _read(db, _push(B), job_id=8)
    [comment] = gh.commit_comments(REPO, B)
    assert (comment["path"], comment["line"]) == (CONFIG, 7)
    assert "line 7" in comment["body"] and "`automations.0.colour`" in comment["body"]
    assert "the last valid file" in comment["body"] and _stored(db) == WEEKLY.decode()
    assert db.query("SELECT line, comment_id FROM automation_config_refusals WHERE commit_sha = ?", [B]) == [
        {"line": 7, "comment_id": comment["id"]}]


async def test_a_redelivered_bad_push_is_not_replied_to_twice(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    await _read(db, _push(B), job_id=8)
    await _read(db, _push(B), job_id=9)
    await _read(db, _push(B), job_id=8)  # the same job again, after it replied
    assert len(gh.commit_comments(REPO, B)) == 1


async def test_a_job_run_again_after_its_post_finds_its_comment_and_does_not_post_again(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    await _read(db, _push(B), job_id=8)
    db.execute("UPDATE automation_config_refusals SET comment_id = NULL")  # as if it died before recording it
    await _read(db, _push(B), job_id=8)
    assert len(gh.commit_comments(REPO, B)) == 1 and len(gh.calls_to("POST", COMMENTS)) == 1
    assert db.query("SELECT comment_id FROM automation_config_refusals")[0]["comment_id"] is not None


async def test_a_line_outside_the_commits_diff_is_replied_to_on_the_commit_naming_the_line(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    gh.set_commit_files(REPO, B, ["README.md"])
    await _read(db, _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert comment["path"] is None and "line 7" in comment["body"]


async def test_the_reply_goes_on_the_commit_that_touched_the_file_not_the_pushs_head(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    await _read(db, config_payloads.push(after=A, commits=[commit(B, modified=(CONFIG,)), commit(A)]))
    assert len(gh.commit_comments(REPO, B)) == 1 and gh.commit_comments(REPO, A) == []


async def test_a_file_removed_forgets_the_automations(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, WEEKLY)
    await _read(db, _push(A))
    del gh._state(REPO)["contents"][CONFIG]
    await _read(db, config_payloads.push(after=B, commits=[commit(B, removed=(CONFIG,))]))
    assert _stored(db) is None and tick(db, MONDAY_6) == []


async def test_an_install_stores_a_valid_file(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, WEEKLY)
    await _read(db, config_payloads.repositories_added([(REPO, 11)]), "installation_repositories")
    assert _stored(db) == WEEKLY.decode() and gh.commit_comments(REPO) == []


async def test_an_install_refuses_an_invalid_file_on_the_last_commit_that_changed_it(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    gh.add_commit(REPO, A, [CONFIG])
    gh.set_commit_files(REPO, A, [CONFIG], {CONFIG: patch(b"", BAD)})  # the commit that added it
    gh.add_commit(REPO, B, ["README.md"])
    await _read(db, config_payloads.installation_created([(REPO, 11)]), "installation")
    await _read(db, config_payloads.installation_created([(REPO, 11)]), "installation", job_id=8)  # reinstalled
    [comment] = gh.commit_comments(REPO)
    assert comment["commit_id"] == A and comment["line"] == 7 and _stored(db) is None


async def test_an_install_with_an_invalid_file_no_commit_names_replies_nowhere(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, BAD)
    await _read(db, config_payloads.installation_created([(REPO, 11)]), "installation")
    assert gh.commit_comments(REPO) == [] and _stored(db) is None


async def test_a_file_over_the_bound_is_refused_without_being_read(gh, backend):
    db = database()
    gh.add_content(REPO, CONFIG, b"# " + b"x" * (300 << 10) + b"\n")
    await _read(db, _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert "larger than" in comment["body"] and len(comment["body"]) < 1_000


MARKER = "<!-- bot:config-refused " + B + " -->"


def test_the_reply_quotes_a_hostile_key_and_reason_bounded_and_inert():
    key = "automations.0." + "`@org/team <!-- bot:run 1 --> ![x](https://evil.example/x.png)`" * 50
    text = config_refusal.body(ConfigError("unknown key " + "@everyone " * 200, key=key, line=7),
                               ".github/bot.yml@abc1234", MARKER)
    assert len(text) < 1_000 and "line 7" in text
    assert markers(text) == [MARKER] and "@everyone" not in text


@settings(max_examples=200, deadline=None)
@given(key=st.none() | st.text(max_size=2_000), reason=st.text(max_size=5_000),
       line=st.none() | st.integers(min_value=1, max_value=10**6), last=st.none() | st.text(max_size=300))
def test_property_the_reply_is_bounded_and_carries_only_its_own_marker(key, reason, line, last):
    text = config_refusal.body(ConfigError(reason, key=key, line=line), last, MARKER)
    assert len(text) <= 1_500 and markers(text) == [MARKER]


def test_jobs_racing_to_refuse_one_commit_claim_its_reply_once(backend):
    database()  # migrated
    claims: list[str | None] = []
    barrier = threading.Barrier(4)

    def claim(job_id: int) -> None:
        db = bot_db.connect(settings=current())
        barrier.wait()
        claims.append(config_refusal._claim(db, REPO, B, ConfigError("bad", line=7), job_id))
        db.close()

    threads = [threading.Thread(target=claim, args=(job_id,)) for job_id in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert claims.count("new") == 1 and claims.count(None) == 3
