"""GitHub's Link header read through its allowlist (bot/github/links.py): what is accepted is
declared (next, prev, first, last; on the API's own origin, under its path), the rest refused and
logged."""
from __future__ import annotations

import logging

import httpx
from hypothesis import given
from hypothesis import strategies as st

from bot.github import links
from tests.fakes.github import FakeGitHub

API = "https://api.github.com"
GHES = "https://ghe.example.com/api/v3"
_query = st.text("abcdefgh0123456789=&_-%", max_size=30)
_path = st.lists(st.text("abcdefghijklmnopqrstuvwxyz0123456789_-.", min_size=1, max_size=12), min_size=1,
                 max_size=6).filter(lambda parts: ".." not in parts).map(lambda parts: "/" + "/".join(parts))


def header(pairs: list[tuple[str, str]]) -> str:
    return ", ".join(f'<{url}>; rel="{rel}"' for url, rel in pairs)


def test_githubs_own_header_is_read_whole():
    found = links.read('<https://api.github.com/repositories/1/issues/1/comments?page=2>; rel="next", '
                       '<https://api.github.com/repositories/1/issues/1/comments?page=5>; rel="last"', API)
    assert found.rels == {"next": f"{API}/repositories/1/issues/1/comments?page=2",
                          "last": f"{API}/repositories/1/issues/1/comments?page=5"} and not found.refused


@given(st.dictionaries(st.sampled_from(links.RELS), st.tuples(_path, _query), min_size=1))
def test_declared_links_on_the_api_are_accepted_as_named(named):
    urls = {rel: f"{GHES}{path}?{query}" for rel, (path, query) in named.items()}
    found = links.read(header([(url, rel) for rel, url in urls.items()]), GHES)
    assert found.rels == urls and not found.refused


@given(st.sampled_from(["http://api.github.com", "https://api.github.com.evil.example", "https://evil.example",
                        "https://user:pw@api.github.com", "https://api.github.com:444", "//api.github.com", ""]),
       _path, st.sampled_from(links.RELS))
def test_a_link_off_the_apis_origin_is_refused(origin, path, rel):
    found = links.read(header([(f"{origin}{path}", rel)]), API)
    assert found.rels == {} and found.refused


@given(_path, st.sampled_from(links.RELS))
def test_a_link_outside_the_apis_path_is_refused(path, rel):
    found = links.read(header([(f"https://ghe.example.com/elsewhere{path}", rel)]), GHES)
    assert found.rels == {} and found.refused


@given(st.text(min_size=1, max_size=300))
def test_whatever_the_header_says_only_declared_rels_on_the_api_are_accepted(text):
    found = links.read(text, API)
    assert set(found.rels) <= set(links.RELS)
    assert all(links.on_api(url, API) for url in found.rels.values())


@given(_path, st.text("abcdefghijklmnopqrstuvwxyz ", min_size=1, max_size=12).filter(lambda r: r not in links.RELS))
def test_a_rel_not_declared_is_refused(path, rel):
    found = links.read(header([(f"{API}{path}", rel)]), API)
    assert "next" not in found.rels and found.refused


def test_a_rel_named_twice_is_refused_both_times():
    found = links.read(header([(f"{API}/a?page=2", "next"), (f"{API}/b?page=9", "next"), (f"{API}/a?page=5", "last")]),
                       API)
    assert found.rels == {"last": f"{API}/a?page=5"} and found.refused


def test_a_fragment_or_a_dotdot_segment_is_refused():
    for url in (f"{API}/a?page=2#x", f"{API}/a/../../b?page=2"):
        assert links.read(header([(url, "next")]), API).refused


def test_a_header_over_its_cap_is_refused_whole():
    pairs = [(f"{API}/{'a' * 1000}?page={n}", "next") for n in range(9)]
    assert links.read(header(pairs), API) == links.Links(refused=True)


def test_a_refused_link_is_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="bot.github.links"):
        links.read('<https://evil.example/a?page=2>; rel="next"', API)
    assert "refused" in caplog.text and "evil.example" in caplog.text


def test_no_header_is_no_links():
    assert links.read(None, API) == links.Links() and links.read("", API) == links.Links()


def test_the_published_example_is_read_whole():
    """GitHub's REST description's example Link header (pulls/list-review-comments, 200)."""
    found = links.read('<https://api.github.com/resource?page=2>; rel="next", '
                       '<https://api.github.com/resource?page=5>; rel="last"', API)
    assert found == links.Links({"next": f"{API}/resource?page=2", "last": f"{API}/resource?page=5"})


def test_the_fake_githubs_link_header_names_what_github_names_and_is_read_whole():
    with FakeGitHub(require_auth=False) as gh:
        gh.add_repo("o/r")
        gh.add_issue("o/r", 1)
        for n in range(7):
            gh.add_comment("o/r", 1, f"c{n}")
        first, middle, last = (httpx.get(f"{gh.url}/repos/o/r/issues/1/comments?per_page=3&page={page}")
                               for page in (1, 2, 3))
        read = {name: links.read(answer.headers.get("link"), gh.url) for name, answer in
                (("first", first), ("middle", middle), ("last", last))}
    assert {name: sorted(found.rels) for name, found in read.items()} == {
        "first": ["last", "next"], "middle": ["first", "last", "next", "prev"], "last": ["first", "prev"]}
    assert not any(found.refused for found in read.values())
    assert read["middle"].rels["prev"] == read["middle"].rels["first"] and read["first"].rels["last"].endswith("page=3")
