"""End to end, with real CLIs against the fake providers and the fake GitHub, under the developer's
and the deployment's profile: writers decline the same kind of finding on two pull requests, the
bot proposes a rule, a maintainer signs in to the service's settings page and approves it, the
rule's pull request adds it to `tests/REVIEW.md`, and the next review, by another agent, is told
the rule, withholds the matching finding the agent raises anyway, and says so."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx
import pytest

from bot.review import learned, learned_pr
from tests.fakes.provider import call, say
from tests.review.world import PR, World, open_world
from tests.spine.service import REPO, scenario

pytestmark = [pytest.mark.e2e, pytest.mark.sandbox]
DOCSTRING = "Missing docstring on this test function."
PAGE = f"/settings/repos/{REPO}"
TESTS = {2: "tests/test_add.py", 3: "tests/test_sub.py", 4: "tests/test_mul.py"}


def written_test(name: str) -> str:
    return f"def test_{name}():\n    assert {name}(1, 1) == {name}(1, 1)\n"


def finding(number: int, body: str = DOCSTRING, line: int = 1) -> dict:
    return {"path": TESTS[number], "line": line, "side": "RIGHT", "body": body, "severity": "nit"}


class Browser:
    """A person's browser against the service: its cookies kept by hand (they are Secure under a
    public URL, which an http:// client would not send back) and the service's Host."""

    def __init__(self, world: World):
        self.world, self.cookies = world, {}

    def go(self, method: str, path: str, **options) -> httpx.Response:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        answer = httpx.request(method, self.world.service.url + path, timeout=60, follow_redirects=False,
                               headers={**self.world.service.headers, "Cookie": cookie}, **options)
        for header in answer.headers.get_list("set-cookie"):
            name, _, rest = header.partition("=")
            value = rest.split(";", 1)[0]
            if value and "max-age=0" not in header.lower():
                self.cookies[name] = value
            else:
                self.cookies.pop(name, None)
        return answer

    def sign_in(self, login: str) -> None:
        """Login with GitHub, as a person clicks through it (GitHub approves at once)."""
        assert self.world.github is not None
        self.world.github.sign_in_as(login)
        to_github = self.go("GET", "/settings/login").headers["location"]
        back = urlsplit(httpx.get(to_github, follow_redirects=False).headers["location"])
        assert self.go("GET", f"{back.path}?{back.query}").status_code == 303

    def csrf(self, page: str) -> str:
        return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def reviewed_and_declined(world: World, number: int, comment_id: int) -> None:
    """codex raises the docstring finding on pull request `number`; a writer answers "won't fix";
    the re-review records the decline."""
    world.providers["codex"].script(call("comment_on_line", finding(number)), say("One nit."))
    world.ask("@bot codex review", comment_id=comment_id, number=number)
    world.answer(number=number)
    [comment] = world.reviews(number)[0]["_comments"]
    world.gh.add_review_comment(REPO, number, "Won't fix: tests need no docstrings.", user="alice",
                                path=TESTS[number], line=1, in_reply_to=comment["id"], association="MEMBER")
    world.providers["codex"].script(say("Nothing new."))
    world.ask("@bot codex review", comment_id=comment_id + 1, number=number)
    world.answer(nth=2, number=number)


@pytest.fixture
def world(tmp_path):
    with open_world(tmp_path, bot_yml="reviews:\n  quiet: false\n", extra={TESTS[2]: written_test("add")},
                    signed_in=True) as opened:
        opened.gh.set_permission(REPO, "alice", "write")
        opened.github.add_repo(REPO, installation_id=1, Codertocat="admin")
        opened.open_pull(3, {TESTS[3]: written_test("sub")})
        opened.open_pull(4, {TESTS[4]: written_test("mul")})
        yield opened


@scenario
def test_a_rule_writers_taught_and_a_maintainer_approved_is_kept_by_the_next_agent(world):
    reviewed_and_declined(world, PR, 8001)
    assert learned.listed(world.service.database(), REPO) == []  # one pull request teaches nothing
    reviewed_and_declined(world, 3, 8101)
    [candidate] = learned.listed(world.service.database(), REPO)
    assert (candidate.state, candidate.folder) == (learned.CANDIDATE, "tests")

    maintainer = Browser(world)
    maintainer.sign_in("Codertocat")
    page = maintainer.go("GET", PAGE).text
    assert f"Candidate {candidate.id}" in page and f"/pull/{PR}#discussion_r" in page
    approved = maintainer.go("POST", f"{PAGE}/learned", data={
        "csrf": maintainer.csrf(page), "id": str(candidate.id), "action": "approve",
        "wording": candidate.wording, "folder": candidate.folder})
    assert approved.status_code == 303 and approved.headers["location"].endswith("?learned=approved")

    [rule] = learned.approved(world.service.database(), REPO)
    [pull] = [p for p in world.gh.pulls(REPO) if p["head"]["ref"] == learned_pr.branch(rule)]
    assert str(learned_pr.line(rule)) in world.gh.file_on(REPO, pull["head"]["ref"], "tests/REVIEW.md")
    assert f'>#{pull["number"]}</a>' in maintainer.go("GET", PAGE).text

    world.providers["claude"].script(
        call("comment_on_line", finding(4)),
        call("comment_on_line", finding(4, "This assertion compares a value with itself.", line=2)),
        say("Two findings."))
    world.ask("@bot claude review", comment_id=8201, number=4)
    world.answer(number=4)
    [review] = world.reviews(4)
    [posted] = [c["body"] for c in review["_comments"]]
    assert "compares a value with itself" in posted and DOCSTRING not in posted
    assert "1 finding withheld: the repository's approved learned rules cover it." in review["body"]
    assert f"learned rule {rule.id}" in world.providers["claude"].main_requests()[0].last_user_text
