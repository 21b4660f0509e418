"""The first run's manifest flow says in the service's log what became of it: the App created (its
name, id and where it is stored, never a secret of it), or why nothing was created."""
from __future__ import annotations

import logging
from urllib.parse import parse_qs, urlparse

from bot.settings import manifest
from tests.settings.test_first_run import create, fake, form_to_github, setup_page, site  # noqa: F401 (fixtures)

FIRST_RUN = "bot.settings.first_run"


def _lines(caplog) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == FIRST_RUN]


def test_the_app_created_is_logged_without_its_secrets(site, fake, caplog):  # noqa: F811
    caplog.set_level(logging.INFO)
    assert create(site, fake).status_code == 200
    [(level, line)] = _lines(caplog)
    assert level == logging.INFO and "Octo Agent" in line and "777" in line and manifest.FILE in line
    assert "fake-webhook-secret" not in caplog.text and "fake-client-secret" not in caplog.text
    assert "PRIVATE KEY" not in caplog.text


def test_a_code_github_refuses_is_logged_as_nothing_created(site, fake, caplog):  # noqa: F811
    caplog.set_level(logging.INFO)
    state = parse_qs(urlparse(form_to_github(setup_page(site, owner="personal").text)[0]).query)["state"][0]
    site.get(manifest.CALLBACK_PATH, params={"code": "expired", "state": state})
    [(level, line)] = _lines(caplog)
    assert level == logging.WARNING and "not created" in line and "HTTP 4" in line


def test_an_answer_from_another_browser_is_logged(site, fake, caplog):  # noqa: F811
    caplog.set_level(logging.INFO)
    setup_page(site, owner="personal")
    site.get(manifest.CALLBACK_PATH, params={"code": fake.issue_code(), "state": "forged"})
    [(level, line)] = _lines(caplog)
    assert level == logging.WARNING and "not created" in line and "state" in line


def test_a_setup_without_the_code_is_logged(site, caplog):  # noqa: F811
    caplog.set_level(logging.INFO)
    assert site.get("/setup/github-app", params={"setup_code": "wrong"}).status_code == 403
    [(level, line)] = _lines(caplog)
    assert level == logging.WARNING and "setup code" in line
