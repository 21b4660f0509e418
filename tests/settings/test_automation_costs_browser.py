"""Each automation run's model cost on the repository's settings page (issue 35), in Debian's
chromium through Playwright against a real `bot serve`: the cost the relay's ledger holds for the
run's job and that automation shows beside the run's outcome and link; a run that made no priced
call shows none."""
from __future__ import annotations

import time

import pytest

from bot.automations import runs
from bot.relay.budgets import Ledger, Scope, automation_key
from tests.browser import browser_fixture, sign_in_with_github  # noqa: F401
from tests.review.world import open_world
from tests.spine.service import REPO

pytestmark = pytest.mark.e2e
DECLARED = (b"automations:\n  - name: triage\n    on:\n      issues: {types: [opened]}\n    agent: codex\n"
            b"    prompt: Say whether the issue is a bug.\n    max_usd_per_day: 2.5\n")


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path, signed_in=True, BOT_SCHEDULE_INTERVAL="0") as opened:
        opened.github.add_repo(REPO, installation_id=1, octocat="admin")
        opened.gh.add_content(REPO, ".github/bot.yml", DECLARED)
        db = opened.service.database()
        for job, slot, usd in ((41, "d-41", 0.0123), (42, "d-42", None)):
            runs.insert_row(db, REPO, "triage", slot, None, runs.RUN, "alice", None, at=time.time() - 60 + job)
            db.execute("UPDATE automation_runs SET job_id = ? WHERE slot = ?", [job, slot])
            db.execute("INSERT INTO runs (id, job_id) VALUES (?, ?)", [f"run-{job}", str(job)])
            if usd is not None:
                Ledger(db).add(f"run-{job}", Scope(f"{REPO}#1", automation=automation_key(REPO, "triage")), 900, usd)
        yield opened


def test_each_automation_runs_cost_shows_on_the_settings_page(browser, world):
    site = world.service.url
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    sign_in_with_github(page, site, world.github)
    page.goto(f"{site}/settings/repos/{REPO}")
    table = page.get_by_role("table", name="Declared automations")
    items = table.get_by_role("listitem").all_inner_texts()
    text = table.inner_text()
    context.close()
    assert len(items) == 2  # newest first: job 42 (no priced call), then job 41
    assert "$" not in items[0] and items[1].endswith("ran · $0.0123")
    assert "50 runs a day, $2.5 of model cost a day" in text
