"""The parts of GitHub's webhook payloads the intake reads, as typed dictionaries, and which parts
each event is read for. Nothing else of a payload is read.

`bot/intake/payload.py:read_payload` checks a signed payload against these at the door: every part
its event is read for, where present, has the type declared here (`bool` is not a number; None only
where declared), or the payload is Malformed. Past the door the intake reads `Payload`, typed. A
part may still be absent (GitHub leaves out what an action does not have): the code that indexes
one (`data["comment"]["id"]`) reads through `parsed`, which makes its absence Malformed too.

The shapes are GitHub's (docs.github.com, "Webhook events and payloads"; the recorded examples in
tests/fixtures/github and the octokit set), cut to the fields read; tests/intake/
test_github_payload_schema.py holds them to GitHub's published webhook schemas. Any other event
(push, installation, …) is read here for its action only.
"""
from __future__ import annotations

from typing import TypedDict


class User(TypedDict, total=False):
    login: str
    id: int
    type: str  # "User", "Bot", "Organization"


class Repository(TypedDict, total=False):
    id: int
    full_name: str


class Installation(TypedDict, total=False):
    id: int


class Label(TypedDict, total=False):
    name: str


class Item(TypedDict, total=False):
    """An issue or a pull request."""

    id: int
    number: int
    title: str | None
    body: str | None
    user: User | None
    author_association: str
    updated_at: str | None
    draft: bool | None
    pull_request: dict[str, object]  # on an issue: present when the issue is a pull request


class Comment(TypedDict, total=False):
    """An issue comment or a pull request review comment."""

    id: int
    body: str | None
    user: User | None
    author_association: str
    in_reply_to_id: int | None  # a review comment's thread
    path: str | None
    line: int | None


class Review(TypedDict, total=False):
    id: int
    body: str | None
    user: User | None
    author_association: str


class BaseRepo(TypedDict, total=False):
    repo: Repository | None


class PullRef(TypedDict, total=False):
    """A pull request a check suite or a workflow run lists."""

    number: int
    base: BaseRepo | None


class App(TypedDict, total=False):
    slug: str | None


class WorkflowRun(TypedDict, total=False):
    id: int
    conclusion: str | None
    head_sha: str | None
    pull_requests: list[PullRef] | None


class CheckSuite(WorkflowRun, total=False):
    app: App | None


class Package(TypedDict, total=False):
    name: str | None
    ecosystem: str | None


class Dependency(TypedDict, total=False):
    package: Package | None
    manifest_path: str | None


class Advisory(TypedDict, total=False):
    severity: str | None
    ghsa_id: str | None
    cve_id: str | None
    summary: str | None


class Rule(TypedDict, total=False):
    id: str | None
    severity: str | None
    security_severity_level: str | None
    description: str | None


class Location(TypedDict, total=False):
    path: str | None


class Instance(TypedDict, total=False):
    location: Location | None


class Alert(TypedDict, total=False):
    """A Dependabot alert (dependency, security_advisory) or a code scanning alert (rule,
    most_recent_instance)."""

    number: int
    html_url: str | None
    dependency: Dependency | None
    security_advisory: Advisory | None
    rule: Rule | None
    most_recent_instance: Instance | None


class Payload(TypedDict, total=False):
    """A webhook payload (or the Action's event file), as far as the intake reads it."""

    action: str
    repository: Repository | None
    installation: Installation | None
    sender: User | None
    issue: Item
    pull_request: Item
    comment: Comment
    review: Review
    label: Label | None
    assignee: User | None
    requested_reviewer: User | None
    after: str | None  # a pull request's synchronize: the new head
    check_suite: CheckSuite
    workflow_run: WorkflowRun
    alert: Alert


# the parts every event the intake acts on is read for, then each event's own
SHARED = ("action", "repository", "installation", "sender")
_WHO = ("label", "assignee", "requested_reviewer")  # what a label, an assignment or a review request names
READ: dict[str, tuple[str, ...]] = {
    "issue_comment": (*SHARED, "issue", "comment"),
    "issues": (*SHARED, "issue", *_WHO),
    "pull_request": (*SHARED, "pull_request", *_WHO, "after"),
    "pull_request_review": (*SHARED, "pull_request", "review"),
    "pull_request_review_comment": (*SHARED, "pull_request", "comment"),
    "check_suite": (*SHARED, "check_suite"),
    "workflow_run": (*SHARED, "workflow_run"),
    "dependabot_alert": (*SHARED, "alert"),
    "code_scanning_alert": (*SHARED, "alert"),
}
OTHERS = ("action",)  # any other event (push, installation, …): only its action is read (for the log)
