"""Where a reader chooses between the App and the Action, the Action's limit on pull requests from
forks is said first: at the top of docs/action.md (before its set-up) and at the start of the
README's Action section (before the workflow it writes)."""
from __future__ import annotations

from tests.cli.conftest import ROOT


def _says_forks(text: str) -> bool:
    return "from forks" in text and "cannot answer" in text


def test_docs_action_says_it_before_the_set_up():
    page = (ROOT / "docs" / "action.md").read_text()
    assert _says_forks(page[:page.index("## Set up")])


def test_the_readme_action_section_says_it_before_the_workflow():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## As a GitHub Action"):]
    assert _says_forks(section[:section.index("```")])
