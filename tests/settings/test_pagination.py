"""The settings pages list everything GitHub has, however many pages (bot/settings/github.py)."""
from __future__ import annotations

import pytest

from bot.settings import github as gh
from tests.entry_settings import current
from tests.settings.fake_github_oauth import FakeGitHubOAuth

TOKEN = "ghu_fake_pagination_token"


@pytest.fixture
def signed_in(github: FakeGitHubOAuth) -> FakeGitHubOAuth:
    github.sign_in_as("octocat")
    github.tokens[TOKEN] = "octocat"
    return github


def _requests_to(github: FakeGitHubOAuth, path: str) -> int:
    return sum(1 for method, called, _ in github.calls if (method, called) == ("GET", path))


async def test_repositories_of_every_installation_past_the_first_page_are_listed(signed_in):
    """150 installations (two pages of installations): the repositories of all 150 are listed."""
    for n in range(1, 151):
        signed_in.add_repo(f"org{n}/repo", installation_id=n, octocat="admin")
    names = await gh.admin_repositories(current().github_api_url, TOKEN)
    assert len(names) == 150 and "org150/repo" in names


async def test_every_repository_of_an_installation_with_over_a_thousand_is_listed(signed_in):
    """An organisation with 1050 repositories: none is dropped after a fixed number of pages."""
    for n in range(1050):
        signed_in.add_repo(f"big/repo{n:04}", installation_id=1, octocat="maintain")
    names = await gh.admin_repositories(current().github_api_url, TOKEN)
    assert len(names) == 1050 and "big/repo1049" in names


async def test_every_administered_installation_is_listed_once(signed_in):
    """120 organisations the user administers: each installation appears exactly once."""
    for n in range(1, 121):
        signed_in.add_installation(n, f"org{n}", octocat="admin")
    found = await gh.admin_installations(current().github_api_url, TOKEN, "octocat")
    assert sorted(i["id"] for i in found) == list(range(1, 121))


async def test_no_request_is_made_past_the_last_page(signed_in):
    """Exactly 200 installations are two full pages: the pager stops where GitHub's Link header ends."""
    for n in range(1, 201):
        signed_in.add_installation(n, f"org{n}", octocat="member")
    await gh.admin_repositories(current().github_api_url, TOKEN)
    assert _requests_to(signed_in, "/user/installations") == 2
