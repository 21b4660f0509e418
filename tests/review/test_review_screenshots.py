"""One pull request's review threads as GitHub lays them out, from what the bot posted to the fake
GitHub through its own code (render, post, the follow-up): the first review, then the re-review
after a push that fixed one finding while a maintainer declined the other. In Debian's chromium;
with SCREENSHOTS_DIR set (`make screenshots`) saved there as review-first.png and review-rereview.png
(docs/reviews.md shows them)."""
from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
import pytest

from bot.github.client import RetryingAPI, Thread
from bot.review import followup, post
from bot.review.findings import Finding, plan
from bot.review.history import History, Sifted
from bot.review.memory import Earlier
from bot.review.merge import merge
from bot.review.render import AgentOutcome, review_payload
from bot.review.since import Change
from bot.service import store
from tests.browser import CHROMIUM, chromium
from tests.entry_settings import current
from tests.fakes.github import FakeGitHub
from tests.review.thread_html import page
from tests.review.world import BUG_LINE, make_review_remote

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no chromium")]
REPO, FIRST, SECOND = "octo/repo", "5d211cd" + "0" * 33, "9e4b1a7" + "0" * 33
BUG = Finding("codex", "app.py", BUG_LINE, "RIGHT", "add() subtracts: it must add.", suggestion="    return a + b",
              severity="important")
NIT = Finding("codex", "app.py", 1, "RIGHT", "The module docstring could say what the helpers return.",
              severity="nit")


def earlier(number: int, comment: dict, finding: Finding) -> Earlier:
    return Earlier(number, "codex", comment["id"], FIRST, finding.path, finding.line, None, "RIGHT",
                   finding.severity, "", finding.body, "open")


async def the_life(gh: FakeGitHub, files: list[dict], db) -> None:
    scope, outcomes = plan(files), [AgentOutcome("codex", True, "One bug: add() subtracts; one nit.")]
    async with httpx.AsyncClient() as client:
        thread = Thread(RetryingAPI(client, oauth_token="t", base_url=current().github_api_url), REPO, 2)
        await post.post_review(thread, review_payload(merge([BUG, NIT], ["codex"]), outcomes, scope, commit=FIRST))
        nit, bug = sorted(gh.review_comments_of(REPO, 2), key=lambda c: c["line"])
        gh.add_review_comment(REPO, 2, "This is on purpose: the docstring stays one line.", user="Codertocat",
                              path="app.py", line=1, in_reply_to=nit["id"], association="MEMBER")
        history = History(Change(FIRST, ["app.py"]), [earlier(1, bug, BUG)], [earlier(2, nit, NIT)],
                          thread_ids={bug["id"]: f"PRRT_{bug['id']}"})
        sifted = Sifted(declined=merge([NIT], ["codex"]))
        scope.since, outcomes = FIRST, [AgentOutcome("codex", True, "add() adds now; nothing new.")]
        notes = followup.notes(history, sifted, history.open, SECOND)
        await post.post_review(thread, review_payload([], outcomes, scope, commit=SECOND, notes=notes))
        await followup.close_fixed(db, thread, history, history.open, SECOND)


def threads(gh: FakeGitHub) -> list[tuple[list[dict], bool]]:
    comments = gh.review_comments_of(REPO, 2)
    tops = [c for c in comments if not c.get("in_reply_to_id")]
    return [([top, *[c for c in comments if c.get("in_reply_to_id") == top["id"]]],
             gh.thread_resolved(REPO, top["id"])[0]) for top in tops]


def shoot(html_text: str, name: str, tmp_path: Path) -> str:
    folder = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        shown = browser.new_context(viewport={"width": 960, "height": 700}).new_page()
        shown.set_content(html_text)
        shown.screenshot(path=str(folder / f"{name}.png"), full_page=True)
        return shown.inner_text("body")


def test_the_review_threads_render_as_github_shows_them(tmp_path, monkeypatch):
    _, patches = make_review_remote(tmp_path)
    with FakeGitHub(require_auth=False) as gh:
        gh.add_repo(REPO)
        gh.add_pull(REPO, 2)
        gh.add_pull_file(REPO, 2, "app.py", patches["app.py"])
        monkeypatch.setenv("GITHUB_API_URL", gh.url)
        asyncio.run(the_life(gh, gh._state(REPO)["files"][2], store.connect(tmp_path / "bot.db")))
        first_review, second_review = gh.submitted_reviews(REPO, 2)
        first = shoot(page([first_review], [(t[0][:1], False) for t in threads(gh)], "first review"),
                      "review-first", tmp_path)
        second = shoot(page([second_review], threads(gh), "re-review"), "review-rereview", tmp_path)
    assert "Suggested change" in first and "Important:" in first and "Nit:" in first
    assert "Since 5d211cd" in second and "Fixed in 9e4b1a7." in second and "✓ Resolved" in second
    assert "1 finding skipped as declined earlier" in second
