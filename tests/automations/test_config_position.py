"""The config refusal's comment is placed by its `position` in the commit's diff of `.github/bot.yml`
(bot/automations/commit_position.py), GitHub's `line` parameter closing down: the position computed
from the patch (held to unified diffs difflib writes, and to any text at all), the commit read
bounded from the fake GitHub (which serves a commit's files as GitHub does), and the reply on the
commit itself, naming the line, when the line is not in the diff or the patch is missing or too
large."""
from __future__ import annotations

import difflib
import json

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.automations import commit_position
from bot.automations.commit_position import position
from bot.github.client import TokenCache, installation_thread
from tests.automations.config_payloads import CONFIG, patch
from tests.automations.test_config_read import BAD, WEEKLY, B, _push, _read
from tests.automations.test_config_read import gh as gh  # noqa: F401  (the fixture)
from tests.entry_settings import current, database
from tests.fakes.openapi_check import REST_DESCRIPTION
from tests.spine.service import REPO

WORDS = st.sampled_from(["a", "b", "c", "", "  x: 1", "@@ -1 +1 @@", "+", "-", "\\ No newline"])


def _shown(old: list[str], new: list[str], context: int) -> set[int]:
    """The new file's lines (1-based) a unified diff of `context` shows: every line of a changed group."""
    shown: set[int] = set()
    for group in difflib.SequenceMatcher(None, old, new).get_grouped_opcodes(context):
        for _, _, _, j1, j2 in group:
            shown.update(range(j1 + 1, j2 + 1))
    return shown


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=25), st.lists(WORDS, max_size=25), st.integers(0, 4))
def test_property_a_line_has_a_position_exactly_when_the_diff_shows_it_and_points_at_it(old, new, context):
    text = "\n".join(list(difflib.unified_diff(old, new, lineterm="", n=context))[2:])  # from the first @@
    lines = text.split("\n")
    found = {line: position(text, line) for line in range(0, len(new) + 2)}
    shown = _shown(old, new, context) if text else set()
    assert {line for line, at in found.items() if at is not None} == shown
    for line in shown:
        at = found[line]
        assert at is not None and lines[at][:1] in ("+", " ") and lines[at][1:] == new[line - 1]
    ordered = [found[line] for line in sorted(shown)]
    assert ordered == sorted(ordered)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400) | st.lists(st.sampled_from(
    ["@@ -1,2 +1,2 @@", "@@ -0,0 +1 @@", " a", "+b", "-c", "\\ No newline at end of file", "", "x"]),
    max_size=12).map("\n".join), st.integers(-2, 30))
def test_property_any_text_gives_no_position_or_one_on_a_line_the_commit_has(text, line):
    at = position(text, line)
    assert at is None or (0 < at < len(text.split("\n")) and text.split("\n")[at][:1] in ("+", " "))


def test_a_later_hunks_header_is_counted_as_a_position():
    text = "@@ -1,2 +1,2 @@\n a\n-b\n+B\n@@ -10,2 +10,2 @@\n j\n-k\n+K"
    assert (position(text, 2), position(text, 10), position(text, 11), position(text, 5)) == (3, 5, 7, None)


def test_a_no_newline_marker_is_counted_as_a_position_not_as_a_line():
    text = "@@ -1 +1,2 @@\n-a\n\\ No newline at end of file\n+a\n+b"
    assert (position(text, 1), position(text, 2)) == (3, 4)


def test_a_hunk_holding_other_counts_than_its_header_gives_no_position():
    assert position("@@ -1,2 +1,2 @@\n a\n+b", 1) is None  # one line short
    assert position("@@ -1 +1 @@\n a\n b", 1) is None  # one line over
    assert position("@@ -29,7 +29,7 @@\n.....", 29) is None  # GitHub's documentation sample is no diff


async def test_the_fake_serves_a_commits_files_in_githubs_shape(gh):  # noqa: F811
    """Held to the REST description's example of `GET /repos/{owner}/{repo}/commits/{ref}`: the same
    members, and a file entry with every member the example's has (the conformance check validates
    the schema on each answer)."""
    example = json.loads(REST_DESCRIPTION.read_text())["components"]["examples"]["commit"]["value"]
    gh.set_commit_files(REPO, B, [CONFIG, "README.md"], {CONFIG: patch(WEEKLY, BAD)})
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await _thread(client)
        answer = await thread.api.getitem(f"{thread.prefix}/commits/{B}")
        paged = await thread.api.getitem(f"{thread.prefix}/commits/{B}?per_page=1&page=2")
    assert set(answer) == set(example)
    [config, readme] = answer["files"]
    assert set(example["files"][0]) <= set(config) and config["patch"] == patch(WEEKLY, BAD)
    assert "patch" not in readme  # as GitHub answers a binary or too large file
    assert [f["filename"] for f in paged["files"]] == ["README.md"]
    assert gh.conformance_errors == []


async def _thread(client: httpx.AsyncClient):
    return await installation_thread(client, TokenCache.of(current()), 1, REPO, 0, frozenset({"bot[bot]"}))


async def test_the_refusal_is_placed_by_its_position_in_the_commits_diff(gh, backend):  # noqa: F811
    gh.add_content(REPO, CONFIG, BAD)
    gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: patch(WEEKLY, BAD)})
    await _read(database(), _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert (comment["path"], comment["position"], comment["line"]) == (CONFIG, position(patch(WEEKLY, BAD), 7), 7)
    [posted] = [call.body for call in gh.calls_to("POST", rf"/repos/{REPO}/commits/{B}/comments$")]
    assert "line" not in posted and posted["position"] == 4  # under the @@: lines 4 to 6 as context, then 7


async def test_a_line_the_diff_does_not_show_is_replied_to_on_the_commit_naming_it(gh, backend):  # noqa: F811
    notes, more = (b"".join(b"# note %d\n" % n for n in span) for span in (range(10), range(10, 15)))
    gh.add_content(REPO, CONFIG, BAD + notes + more)  # line 7 unchanged; the diff shows only the file's end
    gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: patch(BAD + notes, BAD + notes + more)})
    await _read(database(), _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert comment["path"] is None and comment["position"] is None and "line 7" in comment["body"]


@pytest.mark.parametrize("served", [None, "too large"], ids=["missing", "too-large"])
async def test_a_patch_missing_or_too_large_is_replied_to_on_the_commit_naming_the_line(gh, backend, monkeypatch,  # noqa: F811
                                                                                         served):
    gh.add_content(REPO, CONFIG, BAD)
    text = patch(WEEKLY, BAD)
    gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: None if served is None else text})
    monkeypatch.setattr(commit_position, "MAX_PATCH_CHARS", len(text) - 1)
    await _read(database(), _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert comment["path"] is None and "line 7" in comment["body"]


async def test_a_commit_page_over_its_byte_bound_is_not_read(gh, backend, monkeypatch):  # noqa: F811
    gh.add_content(REPO, CONFIG, BAD)
    gh.set_commit_files(REPO, B, [CONFIG], {CONFIG: patch(WEEKLY, BAD)})
    monkeypatch.setattr(commit_position, "MAX_PAGE_BYTES", 512)
    await _read(database(), _push(B))
    [comment] = gh.commit_comments(REPO, B)
    assert comment["path"] is None and "line 7" in comment["body"]


@pytest.mark.parametrize(("before", "placed"), [(150, True), (300, False)], ids=["page-2", "past-the-pages"])
async def test_the_files_are_read_a_page_at_a_time_up_to_the_bound(gh, before, placed):
    """The file among a large commit's files: found on a later page, not past MAX_FILE_PAGES."""
    others = [f"a/{n:04}.txt" for n in range(before)]
    gh.set_commit_files(REPO, B, [*others, CONFIG], {CONFIG: patch(WEEKLY, BAD)})
    async with httpx.AsyncClient(timeout=30) as client:
        thread = await _thread(client)
        found = await commit_position.patch_of(thread, B, CONFIG)
    assert (found == patch(WEEKLY, BAD)) is placed
    pages = gh.calls_to("GET", rf"/repos/{REPO}/commits/{B}\?")
    assert len(pages) == (2 if placed else commit_position.MAX_FILE_PAGES)
