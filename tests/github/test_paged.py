"""A bounded paged read (bot/github/paged.py) against the fake GitHub, which pages its lists as
GitHub does (`per_page`, `page`, a `Link: rel="next"` header)."""
from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.github import paged
from bot.github.client import RetryingAPI
from tests.fakes.github import FakeGitHub

REPO = "octo/repo"
LIST = f"/repos/{REPO}/issues/1/comments"


@pytest.fixture
def gh():
    with FakeGitHub(require_auth=False) as fake:
        fake.add_repo(REPO)
        fake.add_issue(REPO, 1)
        yield fake


def comments(gh: FakeGitHub, count: int) -> list[int]:
    return [gh.add_comment(REPO, 1, f"comment {n}")["id"] for n in range(count)]


async def read(gh: FakeGitHub, url: str = LIST, **bounds) -> paged.Listed:
    async with httpx.AsyncClient() as client:
        return await paged.read_list(RetryingAPI(client, base_url=gh.url), url, **bounds)


def pages_asked(gh: FakeGitHub) -> int:
    return len(gh.calls_to("GET", LIST))


async def test_a_list_longer_than_the_cap_is_read_up_to_the_cap_and_says_it_stopped(gh):
    ids = comments(gh, 23)
    listed = await read(gh, most=10, per_page=5)
    assert [c["id"] for c in listed.items] == ids[:10] and listed.cut
    assert pages_asked(gh) == 2  # the pages after the cap are never asked for


async def test_a_cap_inside_a_page_keeps_only_the_items_up_to_the_cap(gh):
    ids = comments(gh, 12)
    listed = await read(gh, most=7, per_page=5)
    assert [c["id"] for c in listed.items] == ids[:7] and listed.cut


async def test_a_list_within_the_cap_is_read_to_the_links_end_and_is_not_cut(gh):
    ids = comments(gh, 12)
    listed = await read(gh, most=100, per_page=5)
    assert [c["id"] for c in listed.items] == ids and not listed.cut
    assert pages_asked(gh) == 3


async def test_a_list_exactly_the_caps_length_is_not_cut(gh):
    ids = comments(gh, 10)
    listed = await read(gh, most=10, per_page=5)
    assert [c["id"] for c in listed.items] == ids and not listed.cut


async def test_the_pages_are_bounded_even_when_the_items_are_not_reached(gh):
    comments(gh, 30)
    listed = await read(gh, most=1000, per_page=5, pages=2)
    assert len(listed.items) == 10 and listed.cut and pages_asked(gh) == 2


async def test_the_read_asks_for_its_page_size_in_place_of_the_one_its_url_named(gh):
    comments(gh, 3)
    listed = await read(gh, url=f"{LIST}?per_page=30", most=10, per_page=2)
    assert len(listed.items) == 3 and pages_asked(gh) == 2  # pages of 2, not the 30 the url named


async def test_an_object_answer_is_read_through_its_key(gh):
    gh.add_pull(REPO, 2, head_sha="c" * 40)
    gh.add_check_run(REPO, "c" * 40, "tests", conclusion="failure")
    gh.add_check_run(REPO, "c" * 40, "lint", conclusion="success")
    listed = await read(gh, url=f"/repos/{REPO}/commits/{'c' * 40}/check-runs", most=1, key="check_runs")
    assert len(listed.items) == 1 and listed.cut


@pytest.mark.parametrize("bounds", [{"most": 0}, {"most": 5, "per_page": 0}, {"most": 5, "per_page": 101}])
async def test_an_unbounded_read_is_refused(gh, bounds):
    with pytest.raises(ValueError):
        await read(gh, **bounds)


@given(st.lists(st.tuples(st.sampled_from(["per_page", "page", "state", "sort"]),
                          st.text("abc123", min_size=0, max_size=4)), max_size=5),
       st.integers(1, 100))
def test_the_page_size_is_named_once_whatever_the_url_named(query, per_page):
    url = "/repos/o/r/issues?" + "&".join(f"{name}={value}" for name, value in query)
    asked = paged.with_per_page(url, per_page)
    named = [part for part in asked.split("?", 1)[1].split("&") if part.startswith("per_page=")]
    assert named == [f"per_page={per_page}"]


# ---------------------------------------------------------------- from the end

async def newest(gh: FakeGitHub, url: str = LIST, **bounds) -> paged.Listed:
    async with httpx.AsyncClient() as client:
        return await paged.read_newest(RetryingAPI(client, base_url=gh.url), url, **bounds)


async def test_the_newest_of_a_long_list_are_read_from_its_last_page_back(gh):
    ids = comments(gh, 23)
    listed = await newest(gh, most=7, per_page=5)
    assert [c["id"] for c in listed.items] == ids[-7:] and listed.cut
    assert pages_asked(gh) == 3  # the first (it names the last), the last (3 items), the one before


async def test_a_list_within_the_bound_is_read_whole_from_the_end_without_reading_a_page_twice(gh):
    ids = comments(gh, 12)
    listed = await newest(gh, most=100, per_page=5)
    assert [c["id"] for c in listed.items] == ids and not listed.cut
    assert pages_asked(gh) == 3


async def test_a_list_of_one_page_is_read_in_one_request(gh):
    ids = comments(gh, 4)
    listed = await newest(gh, most=3, per_page=5)
    assert [c["id"] for c in listed.items] == ids[-3:] and listed.cut and pages_asked(gh) == 1


async def test_reading_back_to_the_first_page_is_not_cut_when_the_list_fits(gh):
    ids = comments(gh, 10)
    listed = await newest(gh, most=10, per_page=5)
    assert [c["id"] for c in listed.items] == ids and not listed.cut and pages_asked(gh) == 2


async def test_the_newest_read_is_bounded_in_pages_too(gh):
    comments(gh, 40)
    listed = await newest(gh, most=1000, per_page=5, pages=3)
    assert len(listed.items) == 10 and listed.cut and pages_asked(gh) == 3


# ---------------------------------------------------------------- a hostile GitHub

def endless(url: str, page: int) -> str:
    return f'<{url}?per_page=5&page={page + 1}>; rel="next"'


async def test_a_next_link_that_never_ends_is_followed_only_up_to_the_bound(gh):
    comments(gh, 3)  # every page after the first is empty, and names a next
    gh.links_instead(r"/issues/1/comments$", endless)
    listed = await read(gh, most=20, per_page=5)
    assert len(listed.items) == 3 and listed.cut and pages_asked(gh) == 4


async def test_pages_shorter_than_asked_with_a_next_link_stop_at_the_page_bound(gh):
    comments(gh, 12)
    gh.links_instead(r"/issues/1/comments$", endless)
    listed = await read(gh, url=f"{LIST}?per_page=5", most=1000, per_page=5, pages=6)
    assert len(listed.items) == 12 and listed.cut and pages_asked(gh) == 6


async def test_a_newest_read_whose_list_names_no_last_reads_on_within_its_bound(gh):
    ids = comments(gh, 12)
    gh.links_instead(r"/issues/1/comments$", endless)
    listed = await newest(gh, most=5, per_page=5)
    assert [c["id"] for c in listed.items] == ids[-5:] and listed.cut and pages_asked(gh) == 3


async def test_a_prev_chain_that_never_reaches_the_first_page_stops_at_the_bound(gh):
    comments(gh, 3)

    def backwards(url: str, page: int) -> str:
        return f'<{url}?per_page=5&page={page + 1}>; rel="next", <{url}?per_page=5&page=9>; rel="last", ' \
               f'<{url}?per_page=5&page={page + 10}>; rel="prev", <{url}?per_page=5&page=1>; rel="first"'
    gh.links_instead(r"/issues/1/comments$", backwards)
    listed = await newest(gh, most=10, per_page=5)
    assert listed.cut and listed.items == [] and pages_asked(gh) == 4


@pytest.mark.parametrize("elsewhere", ["http://127.0.0.2:{port}", "http://evil.example", "https://127.0.0.1:{port}",
                                       "http://user@127.0.0.1:{port}"])
async def test_a_next_link_to_another_host_is_refused_never_followed(gh, elsewhere, caplog):
    comments(gh, 8)
    other = elsewhere.format(port=gh.url.rsplit(":", 1)[1])
    gh.links_instead(r"/issues/1/comments$", lambda url, page: f'<{other}{LIST}?page=2>; rel="next"')
    listed = await read(gh, most=20, per_page=5)
    assert len(listed.items) == 5 and listed.cut and listed.refused and pages_asked(gh) == 1
    assert "refused" in caplog.text


async def test_a_last_link_to_another_host_is_refused_and_the_newest_read_stops(gh):
    comments(gh, 8)
    gh.links_instead(r"/issues/1/comments$", lambda url, page: f'<{url}?page=2>; rel="next", '
                                                               f'<http://evil.example{LIST}?page=2>; rel="last"')
    listed = await newest(gh, most=20, per_page=5)
    assert len(listed.items) == 5 and listed.cut and listed.refused and pages_asked(gh) == 1
