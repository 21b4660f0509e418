"""The repository page's review parts (learned rule candidates, the signal table and chart) and the
writers' signal page with its weekly series, in Debian's chromium at 1280 and 390 px: nothing
scrolls sideways, the charts are drawn without script. With SCREENSHOTS_DIR set, saved as
review-settings-<width>.png and review-signal-<width>.png (docs/reviews.md)."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bot import db as bot_db
from bot.review import learned, memory, signal_series
from bot.review.memory import Posted
from tests.browser import sign_in_with_github
from tests.entry_settings import current
from tests.settings.test_responsive import WIDTHS, _overflow, first_run, site  # noqa: F401 - fixtures

pytestmark = pytest.mark.e2e
REPO = "octo-org/a-repository-with-a-rather-long-name"
TITLE = "Missing docstring on this test function: every public function in tests/ should say what it checks."


def _a_team_that_reviewed() -> None:
    db = bot_db.connect(settings=current())
    for number, (agent, usd, states) in enumerate([("codex", 0.12, "ffdo"), ("claude", 0.31, "fddoo"),
                                                   ("codex", 0.08, "fo"), ("gemini", 0.02, "ddd")], start=1):
        run_id = f"run-{number}-{agent}"
        db.execute("INSERT INTO runs (id, conversation, agent, status) VALUES (?, ?, ?, 'ok')",
                   [run_id, f"{REPO}#{number}", agent])
        db.execute("INSERT INTO run_events (run_id, seq, kind, outcome) VALUES (?, 1, 'review', 'ok')", [run_id])
        db.execute("INSERT INTO model_spend (run_id, tokens, usd) VALUES (?, 1000, ?)", [run_id, usd])
        memory.remember(db, REPO, number, [agent], "a" * 40, number,
                        [Posted(agent, number * 100 + i, f"tests/test_{i}.py", 1, None, "RIGHT", "nit", "f",
                                TITLE if state == "d" else f"finding {number} {i}") for i, state in enumerate(states)])
        found = sorted(memory.findings(db, REPO, number), key=lambda f: f.comment_id or 0)
        for finding, state in zip(found, states, strict=True):
            if state != "o":
                memory.mark(db, [finding.id], memory.FIXED if state == "f" else memory.DECLINED, "", via="reply")
    db.execute("INSERT INTO review_reactions (repo, comment_id, login, content, agent, created_at) "
               f"VALUES ('{REPO}', 100, 'alice', '+1', 'codex', 0), ('{REPO}', 201, 'alice', '-1', 'claude', 0)")
    learned.propose(db, REPO)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_review_parts_of_the_repository_page_fit_the_screen(browser, site, github, width):  # noqa: F811
    github.add_repo(REPO, installation_id=42, octocat="admin")
    github.add_installation(42, "octo-org", octocat="admin")
    _a_team_that_reviewed()
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in_with_github(page, site, github)
    page.goto(f"{site}/settings/repos/{REPO}")
    assert "<script" not in page.content()  # the chart is server-rendered SVG
    assert page.locator("svg[role=img] rect").count() >= 4
    assert page.get_by_role("button", name="Approve").count() == 1
    assert _overflow(page) <= 0
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.locator("h2", has_text="Learned review rules").scroll_into_view_if_needed()
        page.screenshot(path=str(Path(shots) / f"review-settings-{width}.png"), full_page=True)
    context.close()


def _weeks_of_learning() -> None:
    """Eight weeks in which the share acted on rises for codex (50% to 80%) and stays
    flat for claude, as the learned rules take hold."""
    db = bot_db.connect(settings=current())
    fixed_of_codex, number = [5, 5, 6, 6, 7, 7, 8, 8], 100
    for weeks_ago, fixed in zip(range(7, -1, -1), fixed_of_codex, strict=True):
        for agent, states in (("codex", "f" * fixed + "d" * (9 - fixed) + "o"),
                              ("claude", "ffff" + "ddd" + "oo")):
            number += 1
            db.execute("INSERT INTO runs (id, conversation, agent, status) VALUES (?, ?, ?, 'ok')",
                       [f"run-{number}", f"{REPO}#{number}", agent])
            db.execute("INSERT INTO run_events (run_id, seq, kind, outcome) VALUES (?, 1, 'review', 'ok')",
                       [f"run-{number}"])
            memory.remember(db, REPO, number, [agent], "a" * 40, number,
                            [Posted(agent, number * 100 + i, f"src/m{i}.py", 1, None, "RIGHT", "nit", "f",
                                    f"finding {number} {i}") for i in range(len(states))])
            found = sorted(memory.findings(db, REPO, number), key=lambda f: f.comment_id or 0)
            db.execute("UPDATE review_findings SET created_at = ? WHERE repo = ? AND number = ?",
                       [time.time() - weeks_ago * signal_series.WEEK_S, REPO, number])
            for finding, state in zip(found, states, strict=True):
                if state != "o":
                    memory.mark(db, [finding.id], memory.FIXED if state == "f" else memory.DECLINED, "", via="reply")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_signal_over_time_fits_the_screen(browser, site, github, width):  # noqa: F811
    github.add_repo(REPO, installation_id=42, octocat="write")
    github.add_installation(42, "octo-org", octocat="member")
    _weeks_of_learning()
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    sign_in_with_github(page, site, github)
    page.goto(f"{site}/settings/repos/{REPO}/signal")
    assert "<script" not in page.content()
    assert page.locator("svg[role=img] polyline").count() == 2  # a line per agent
    assert "codex: share acted on 50% in the week of" in page.content()
    assert _overflow(page) <= 0
    shots = os.environ.get("SCREENSHOTS_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(shots) / f"review-signal-{width}.png"), full_page=True)
    context.close()
