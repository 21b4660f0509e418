"""The repository's settings page: learned rule candidates with their evidence, approved, edited or
discarded by a maintainer only; every agent's and contributor's text on it inert."""
from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from bot import db as bot_db
from bot.review import learned, memory
from bot.review.learned import Evidence, Learned
from bot.review.memory import Posted
from bot.settings import review_page
from tests.entry_settings import current
from tests.settings.conftest import csrf_of, sign_in

PAGE = "/settings/repos/octo/app"
DOCSTRING = "Missing docstring on this <b>test</b> function."


def a_candidate() -> Learned:
    db = bot_db.connect(settings=current())
    for number in (1, 2):
        memory.remember(db, "octo/app", number, ["codex"], "a" * 40, 9,
                        [Posted("codex", 70 + number, f"tests/test_{number}.py", 1, None, "RIGHT", "nit", "f",
                                DOCSTRING)])
        [finding] = memory.findings(db, "octo/app", number)
        memory.mark(db, [finding.id], memory.DECLINED, "", via="reply")
    [candidate] = learned.propose(db, "octo/app")
    return candidate


def decide(client, candidate: Learned, action: str, **edits: str):
    return client.post(f"{PAGE}/learned", data={"csrf": csrf_of(client), "id": str(candidate.id), "action": action,
                                                "wording": edits.get("wording", candidate.wording),
                                                "folder": edits.get("folder", candidate.folder)})


def test_a_maintainer_sees_a_candidate_with_its_declined_threads(client, github):
    github.add_repo("octo/app", octocat="maintain")
    candidate = a_candidate()
    sign_in(client, github)
    page = client.get(PAGE).text
    assert '/octo/app/pull/1#discussion_r71"' in page and '/octo/app/pull/2#discussion_r72"' in page
    assert "&lt;b&gt;test&lt;/b&gt;" in page and "<b>test</b>" not in page
    assert f'name="id" value="{candidate.id}"' in page


def test_a_maintainer_approves_a_candidate_with_its_wording_and_folder_edited(client, github):
    github.add_repo("octo/app", octocat="maintain")
    candidate = a_candidate()
    sign_in(client, github)
    response = decide(client, candidate, "approve", wording="No docstrings needed in tests.", folder="tests/")
    assert response.status_code == 303 and response.headers["location"] == f"{PAGE}?learned=approved"
    [rule] = learned.approved(bot_db.connect(settings=current()), "octo/app")
    assert (rule.wording, rule.folder, rule.decided_by) == ("No docstrings needed in tests.", "tests", "octocat")
    assert "Approved: the rule applies to every later review." in client.get(f"{PAGE}?learned=approved").text


def test_a_maintainer_discards_a_candidate(client, github):
    github.add_repo("octo/app", octocat="admin")
    candidate = a_candidate()
    sign_in(client, github)
    assert decide(client, candidate, "discard").status_code == 303
    db = bot_db.connect(settings=current())
    assert learned.listed(db, "octo/app") == [] and learned.approved(db, "octo/app") == []


def test_a_folder_outside_the_grammar_is_refused_on_the_page(client, github):
    github.add_repo("octo/app", octocat="admin")
    candidate = a_candidate()
    sign_in(client, github)
    response = decide(client, candidate, "approve", folder="../etc")
    assert response.status_code == 400 and "A folder is a path from the repository" in response.text
    assert learned.approved(bot_db.connect(settings=current()), "octo/app") == []


def test_a_writer_cannot_approve_a_candidate(client, github):
    github.add_repo("octo/app", octocat="write")
    candidate = a_candidate()
    sign_in(client, github)
    assert decide(client, candidate, "approve").status_code == 403
    assert learned.approved(bot_db.connect(settings=current()), "octo/app") == []


def test_a_candidate_of_another_repository_is_not_found_here(client, github):
    github.add_repo("octo/app", octocat="admin")
    github.add_repo("octo/other", octocat="admin")
    candidate = a_candidate()
    sign_in(client, github)
    response = client.post("/settings/repos/octo/other/learned",
                           data={"csrf": csrf_of(client), "id": str(candidate.id), "action": "approve"})
    assert response.status_code == 404
    assert learned.approved(bot_db.connect(settings=current()), "octo/app") == []


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.values: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.values += [v or "" for k, v in attrs if k in ("value", "href")]

    def handle_data(self, data):
        self.text.append(data)


ALLOWED_TAGS = {"h2", "p", "form", "fieldset", "legend", "input", "ul", "li", "a", "label", "button", "table",
                "caption", "thead", "tbody", "tr", "th", "td", "code", "details", "summary"}
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80) | st.sampled_from(
    ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "</form><form action=/x>", "&amp;<!--", "'"])


@settings(max_examples=60, deadline=None)
@given(wording=TEXT, title=TEXT, folder=st.sampled_from(["", "tests", "a/b"]))
def test_a_candidates_wording_and_evidence_are_inert_on_the_page(wording, title, folder):
    rule = Learned(3, "o/r", folder, "x", wording, learned.CANDIDATE, (Evidence(1, 5, title),))
    approved = Learned(4, "o/r", folder, "y", wording, learned.APPROVED, (Evidence(2, None, title),), title)
    parsed = Tags()
    parsed.feed(review_page.learned_section([rule, approved], "/settings/repos/o/r", "tok", "https://github.com",
                                            "o/r"))
    assert parsed.tags <= ALLOWED_TAGS
    assert wording in parsed.values and wording in "".join(parsed.text)
    assert title in "".join(parsed.text)
