"""Every payload the automations' tests deliver is one GitHub could send: it validates against
GitHub's published webhook schema of its event and action."""
from __future__ import annotations

import pytest

from tests.automations import payloads
from tests.fakes.webhook_check import webhook_problems

BUILT = {
    "check_suite failure": ("check_suite", payloads.check_suite()),
    "check_suite of a fork": ("check_suite", payloads.check_suite(pulls=())),
    "workflow_run failure": ("workflow_run", payloads.workflow_run()),
    "issue_comment": ("issue_comment", payloads.comment()),
    "pull_request opened": ("pull_request", payloads.pull_request()),
    "pull_request labeled": ("pull_request", payloads.pull_request("labeled", label="bug")),
    "dependabot_alert created": ("dependabot_alert", payloads.dependabot_alert()),
    "code_scanning_alert created": ("code_scanning_alert", payloads.code_scanning_alert()),
}


@pytest.mark.parametrize("name", sorted(BUILT))
def test_a_payload_the_automation_tests_deliver_validates_against_its_events_schema(name):
    event, data = BUILT[name]
    assert webhook_problems(event, data) == []
