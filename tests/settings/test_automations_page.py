"""The repository settings page's automations (issue 35) at 1280 px and on a 390 px phone, in
Debian's chromium through Playwright, against a real `bot serve` and the fake GitHub: each declared
automation with its trigger, agent, may, caps and last runs, a fire token just made (shown once),
and nothing scrolls sideways. With SCREENSHOTS_DIR set (`make screenshots`) the page is saved as
automations-<width>.png."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from bot.automations import runs
from tests.browser import browser_fixture, sign_in_with_github  # noqa: F401
from tests.review.world import open_world
from tests.spine.service import REPO

pytestmark = pytest.mark.e2e
WIDTHS = (1280, 390)
DECLARED = (b"automations:\n"
            b"  - name: fix-the-failing-checks-of-every-pull-request\n    on:\n      check_suite: {conclusion: [failure]}\n"
            b"    agent: codex\n    prompt: Fix the failing checks.\n    may: [comment, push]\n    max_attempts: 3\n"
            b"  - name: nightly\n    on:\n      fire: {}\n    agent: claude\n    prompt: Report.\n"
            b"  - name: deps\n    on:\n      schedule: [{cron: \"0 6 * * 1\"}, {cron: \"30 18 1-7 * 5\"}]\n"
            b"    agent: codex\n    prompt: Update the dependencies.\n    may: [draft_pull_request]\n")


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path, signed_in=True, BOT_SCHEDULE_INTERVAL="0") as opened:
        opened.github.add_repo(REPO, installation_id=1, octocat="admin")
        opened.gh.add_content(REPO, ".github/bot.yml", DECLARED)
        db = opened.service.database()
        name = "fix-the-failing-checks-of-every-pull-request"
        runs.insert_row(db, REPO, name, "head:" + "a" * 40, None, runs.REFUSED, "github-actions",
                        "its 3 attempts since the last push by a person (at aaaaaaa) are spent")
        runs.insert_row(db, REPO, name, "head:" + "b" * 40, None, runs.SKIPPED, None,
                        "the head of #2 moved to ccccccc since the checks of bbbbbbb ran")
        yield opened


def _overflow(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_automations_of_a_repository_fit_its_settings_page(browser, world, width):
    site = world.service.url
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in_with_github(page, site, world.github)
    page.goto(f"{site}/settings/repos/{REPO}")
    page.get_by_role("button", name="Create token").click()
    token = page.locator("#fire-token").inner_text()
    assert re.fullmatch(r"bota_[A-Za-z0-9_-]{43}", token)
    text = page.locator("main").inner_text()
    assert "schedule: 0 6 * * 1; 30 18 1-7 * 5" in text and "3 attempts" in text
    assert "refused: its 3 attempts since the last push by a person" in text
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"automations-{width}.png"), full_page=True)
    overflow = _overflow(page)
    context.close()
    assert overflow == 0
