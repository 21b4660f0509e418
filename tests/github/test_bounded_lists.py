"""Every GitHub list the bot reads is read up to a bound (bot/github/paged.py), from the end when
the newest items matter, against the fake GitHub with lists longer than the bound and hostile Link
headers (a `next` that never ends, a link to another host: refused, never followed)."""
from __future__ import annotations

from urllib.parse import urlsplit

import httpx
import pytest

from bot.cli import action_schedule
from bot.github import client, thread
from bot.github.client import RetryingAPI, Thread
from bot.review import post
from bot.settings import github as settings_github
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
BOT = "bot[bot]"
OWN = frozenset({BOT})


@pytest.fixture
def gh():
    with FakeGitHub(require_auth=False) as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1)
        fake.add_pull(REPO, 2, head_sha="c" * 40)
        yield fake


@pytest.fixture
def evil():
    with FakeGitHub(require_auth=False) as fake:
        yield fake


async def on_thread(gh: FakeGitHub, number: int, work):
    async with httpx.AsyncClient() as http:
        return await work(Thread(RetryingAPI(http, oauth_token="t", base_url=gh.url), REPO, number, own_logins=OWN))


def people_comments(gh: FakeGitHub, count: int, number: int = 1) -> list[int]:
    return [gh.add_comment(REPO, number, f"comment {n}")["id"] for n in range(count)]


def off_host(evil: FakeGitHub):
    return lambda url, page: f'<{evil.url}{urlsplit(url).path}?page={page + 1}>; rel="next"'


async def test_a_long_threads_comments_are_its_newest(gh):
    ids = people_comments(gh, client.COMMENTS_READ + 5)
    comments = await on_thread(gh, 1, lambda t: t.comments())
    assert [c["id"] for c in comments] == ids[-client.COMMENTS_READ:]


async def test_the_bots_marked_comment_is_found_at_the_end_of_a_thread_longer_than_the_bound(gh):
    people_comments(gh, client.COMMENTS_READ + 5)
    mine = gh.add_comment(REPO, 1, "done\n<!-- bot:job 9 -->", user=BOT, user_type="Bot")["id"]
    assert await on_thread(gh, 1, lambda t: t.find_comment("<!-- bot:job 9 -->")) == mine


async def test_a_comment_list_that_links_off_githubs_api_is_never_followed(gh, evil):
    people_comments(gh, 3)
    gh.links_instead(r"/issues/1/comments$", off_host(evil))
    assert len(await on_thread(gh, 1, lambda t: t.comments())) == 3
    assert evil.calls == []


async def test_the_thread_context_says_only_the_newest_comments_were_read(gh):
    people_comments(gh, client.COMMENTS_READ + 1)
    data = await on_thread(gh, 1, lambda t: thread.fetch(t, is_pr=False, hosts=thread.Hosts(gh.url, gh.url)))
    assert len(data.comments) == client.COMMENTS_READ
    assert any("the newest 1000 were read" in problem for problem in data.problems)


async def test_the_thread_context_reads_the_newest_reviews_and_says_the_list_was_cut(gh):
    for n in range(thread.REVIEWS_READ + 2):
        gh.add_review(REPO, 2, f"review {n}", user="carol")
    data = await on_thread(gh, 2, lambda t: thread.fetch(t, is_pr=True, hosts=thread.Hosts(gh.url, gh.url)))
    assert [r["body"] for r in data.reviews][-1] == f"review {thread.REVIEWS_READ + 1}"
    assert len(data.reviews) == thread.REVIEWS_READ
    assert any(p.startswith("the reviews: GitHub lists more; only the newest") for p in data.problems)


async def test_the_thread_context_names_a_refused_link_in_its_problems(gh, evil):
    gh.add_review_comment(REPO, 2, "a note", user="carol")
    gh.links_instead(r"/pulls/2/comments$", off_host(evil))
    data = await on_thread(gh, 2, lambda t: thread.fetch(t, is_pr=True, hosts=thread.Hosts(gh.url, gh.url)))
    assert any(p.startswith("the review comments: only 1 read") for p in data.problems)
    assert evil.calls == []


async def test_a_file_list_that_never_ends_is_read_up_to_its_bound_and_named_in_the_problems(gh):
    gh.add_pull_file(REPO, 2, "a.py", patch="@@ -1 +1 @@\n-x\n+y")
    gh.links_instead(r"/pulls/2/files$", lambda url, page: f'<{url}?per_page=100&page={page + 1}>; rel="next"')
    data = await on_thread(gh, 2, lambda t: thread.fetch(t, is_pr=True, hosts=thread.Hosts(gh.url, gh.url)))
    assert [f["filename"] for f in data.files] == ["a.py"]
    assert "the pull request's files: GitHub lists more; only the first 1 were read" in data.problems
    assert len(gh.calls_to("GET", r"/pulls/2/files$")) == thread.FILES_READ // 100


async def test_the_bots_review_is_found_among_more_reviews_than_the_bound(gh):
    for n in range(post.REVIEWS_READ + 5):
        gh.add_review(REPO, 2, f"review {n}", user="carol")
    mine = gh.add_review(REPO, 2, "### Review\n<!-- bot:review 7 -->", user=BOT)
    mine["user"]["type"] = "Bot"
    found = await on_thread(gh, 2, lambda t: post.find_review(t, "<!-- bot:review 7 -->"))
    assert found is not None and found["id"] == mine["id"]


async def test_a_review_list_that_never_ends_is_read_up_to_its_bound(gh):
    gh.links_instead(r"/pulls/2/reviews$", lambda url, page: f'<{url}?per_page=100&page={page + 1}>; rel="next"')
    assert await on_thread(gh, 2, lambda t: post.find_review(t, "<!-- bot:review 7 -->")) is None
    assert len(gh.calls_to("GET", r"/pulls/2/reviews$")) == -(-post.REVIEWS_READ // 100) + 2


async def test_the_comments_of_a_just_posted_review_are_found_after_a_long_list(gh):
    for n in range(post.REVIEW_COMMENTS_READ + 5):
        gh.add_review_comment(REPO, 2, f"note {n}", user="carol", review_id=1)
    ours = [gh.add_review_comment(REPO, 2, f"finding {n}", review_id=77)["id"] for n in range(3)]
    found = await on_thread(gh, 2, lambda t: post.review_comments(t, 77))
    assert [c["id"] for c in found] == ours


async def test_the_comments_of_a_review_are_not_looked_for_off_githubs_api(gh, evil):
    gh.add_review_comment(REPO, 2, "finding", review_id=77)
    gh.links_instead(r"/pulls/2/comments$", lambda url, page: f'<{url}?page=2>; rel="next", '
                                                              f'<{evil.url}{urlsplit(url).path}?page=9>; rel="last"')
    assert await on_thread(gh, 2, lambda t: post.review_comments(t, 77)) != [] and evil.calls == []


async def test_the_automations_issue_search_stops_at_its_bound_on_a_list_that_never_ends(gh, caplog):
    gh.links_instead(r"/repos/octo/repo/issues$", lambda url, page: f'<{url}?state=open&page={page + 1}>; rel="next"')
    assert await on_thread(gh, 0, lambda t: action_schedule.open_issue(t, "deps")) is None
    assert len(gh.calls_to("GET", r"/repos/octo/repo/issues$")) == action_schedule.MAX_ISSUES_READ // 100
    assert "a new one is opened" in caplog.text


async def test_the_automations_issue_is_found_among_more_open_issues_than_the_bound(gh):
    for number in range(3, action_schedule.MAX_ISSUES_READ + 4):
        gh.add_issue(REPO, number, title=f"issue {number}", user="carol")
    mine = gh.add_issue(REPO, 5000, title="Automation: deps", user=BOT)
    mine["user"]["type"] = "Bot"
    assert await on_thread(gh, 0, lambda t: action_schedule.open_issue(t, "deps")) == 5000


async def test_the_settings_pages_refuse_a_list_that_never_ends(gh):
    people_comments(gh, 2)
    gh.links_instead(r"/issues/1/comments$", lambda url, page: f'<{url}?per_page=100&page={page + 1}>; rel="next"')
    with pytest.raises(settings_github.GitHubRefused, match="more than"):
        await settings_github._pages(gh.url, "t", f"/repos/{REPO}/issues/1/comments", "items")
    assert len(gh.calls_to("GET", r"/issues/1/comments$")) == settings_github.MAX_ITEMS // settings_github.PER_PAGE


async def test_the_settings_pages_never_send_the_users_token_off_githubs_api(gh, evil):
    people_comments(gh, 2)
    gh.links_instead(r"/issues/1/comments$", off_host(evil))
    with pytest.raises(settings_github.GitHubRefused, match="not followed"):
        await settings_github._pages(gh.url, "ghu_user_token", f"/repos/{REPO}/issues/1/comments", "items")
    assert evil.calls == []
