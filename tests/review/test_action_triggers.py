"""`bot action` on pull_request events: an automatic trigger that bot.yml does not turn on is
ignored without a word; the event is still read."""
from __future__ import annotations

import json

from bot.cli import main as cli
from tests.action.conftest import REPO, github, payload, runner  # noqa: F401
from tests.spine.helpers import FIXTURES


def labeled(name: str) -> dict:
    data = json.loads((FIXTURES / "pull_request.opened.json").read_text())
    data.update(action="labeled", label={"name": name})
    return data


def test_label_with_the_trigger_off_is_ignored_silently(github, runner):  # noqa: F811
    runner.event("pull_request", labeled("bot:review"))
    assert cli.main(["action"]) == 0
    assert runner.outputs()["status"] == "ignored"
    assert [c.method for c in github.calls if c.method != "GET"] == [] and github.comments(REPO, 2) == []


def test_label_reads_the_default_branch_configuration(github, runner):  # noqa: F811
    github.add_content(REPO, ".github/bot.yml", b"triggers:\n  assignment: true\n")
    runner.event("pull_request", labeled("bot:review"))
    cli.main(["action"])
    assert github.calls_to("GET", r"/contents/\.github/bot\.yml$")
    assert runner.outputs()["status"] == "ignored"


def test_an_unrelated_label_is_not_acted_on(github, runner):  # noqa: F811
    runner.event("pull_request", labeled("bug"))
    cli.main(["action"])
    assert github.calls == []


def test_the_install_step_plans_a_run_for_an_agent_label(monkeypatch):
    from bot.cli.action import plan
    from tests.entry_settings import current
    kind, agents, _why = plan("pull_request", labeled("bot:claude"), current())
    assert kind == "run" and "claude" in ((agents,) if isinstance(agents, str) else agents)  # one name or several
