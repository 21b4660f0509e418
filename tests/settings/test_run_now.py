"""Run now on a repository's settings page: a writer (asked of GitHub at the request) queues one run
of an automation that runs in its own issue, as a fired run is queued (its `now:` slot claimed, held
to the caps); a reader, a stale form and an event's automation queue nothing."""
from __future__ import annotations

import datetime as dt

from bot import db as bot_db
from bot.automations import scheduled_job
from bot.automations.schedule import remember
from bot.settings import automations_page
from bot.settings.automation_config import Declared
from bot.workspace.repo_config import parse
from tests.entry_settings import current
from tests.settings.conftest import csrf_of, sign_in

REPO = "octo/app"
PAGE = f"/settings/repos/{REPO}"
DECLARED = ("automations:\n"
            "  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}]\n    agent: codex\n    prompt: p\n"
            "    max_runs_per_day: 1\n"
            "  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n    prompt: p\n")


def stored():
    db = bot_db.connect(settings=current())
    remember(db, REPO, 7, 1, DECLARED, ".github/bot.yml@abc1234")
    return db


def jobs(db) -> list[dict]:
    return db.query("SELECT conversation, spec FROM jobs")


def signed_in_as(client, github, role: str) -> str:
    github.add_repo(REPO, octocat=role)
    sign_in(client, github)
    return csrf_of(client)


def run_now(client, csrf: str, name: str = "deps", key: str = "now-1"):
    return client.post(f"{PAGE}/automations/run", data={"csrf": csrf, "name": name, "key": key})


def test_a_writers_run_now_queues_one_run_in_the_automations_queue(client, github):
    db = stored()
    answer = run_now(client, signed_in_as(client, github, "write"))
    assert answer.status_code == 303 and answer.headers["location"] == f"{PAGE}?run_now=queued"
    [job] = jobs(db)
    assert job["conversation"] == scheduled_job.queue_key(db, REPO, "deps")
    [claim] = db.query("SELECT slot, kind, account FROM automation_runs")
    assert claim == {"slot": "now:now-1", "kind": "run", "account": "octocat"}


def test_a_resent_run_now_form_queues_nothing_more(client, github):
    db = stored()
    csrf = signed_in_as(client, github, "write")
    assert run_now(client, csrf).status_code == 303 and run_now(client, csrf).status_code == 303
    assert len(jobs(db)) == 1


def test_a_reader_is_refused_run_now(client, github):
    db = stored()
    answer = run_now(client, signed_in_as(client, github, "read"))
    assert answer.status_code == 403 and jobs(db) == []


def test_a_run_now_without_the_pages_csrf_token_is_refused(client, github):
    db = stored()
    signed_in_as(client, github, "write")
    assert run_now(client, "forged").status_code == 403 and jobs(db) == []


def test_an_automation_run_by_events_has_no_run_now(client, github):
    db = stored()
    assert run_now(client, signed_in_as(client, github, "write"), name="triage").status_code == 404
    assert jobs(db) == []


def test_run_now_is_held_to_the_daily_cap(client, github):
    db = stored()
    csrf = signed_in_as(client, github, "write")
    assert run_now(client, csrf, key="now-1").status_code == 303
    over = run_now(client, csrf, key="now-2")
    assert over.status_code == 429 and "was not run" in over.text and len(jobs(db)) == 1


def test_a_run_now_key_outside_its_allowlist_is_refused(client, github):
    db = stored()
    assert run_now(client, signed_in_as(client, github, "write"), key="now 1;x").status_code == 400
    assert jobs(db) == []


def test_the_page_shows_the_next_run_in_utc_and_run_now_only_where_it_runs_in_its_issue():
    declared = Declared(parse(DECLARED, source="t").automations, "t")
    where = automations_page.Where("/b", "c", "https://bot", "https://github.com", REPO,
                                   now=dt.datetime(2026, 12, 8, 10, 0, tzinfo=dt.UTC))
    html = automations_page.section(declared, {}, {}, where)
    deps, triage = html.split("<strong>triage</strong>")
    assert "next run 2026-12-14 06:00 UTC" in deps and deps.count("Run now") == 1
    assert "next run" not in triage and "Run now" not in triage
