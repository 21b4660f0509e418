"""Webhook payloads of the events automations run on, each one GitHub could send (tests/automations/
test_event_payloads.py validates every one against GitHub's published webhook schemas).

- `check_suite`: the recorded examples hold none, so it is made from the recorded `check_run.completed`
  payload's own suite (same repository, pull request and app), with the fields a check_suite
  event adds (`latest_check_runs_count`, `check_runs_url`, `head_commit`).
- `workflow_run`: octokit's recorded `workflow_run.completed` with pull requests, moved to the
  recorded check_run's repository (the example's pull request belongs to another one).
- `issue_comment`, `pull_request`: the recorded ones (tests/fixtures/github).
"""
from __future__ import annotations

from tests.spine.helpers import payload

INSTALLATION = {"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}


def check_suite(conclusion: str = "failure", head: str = "a" * 40, pulls: tuple[int, ...] = (2,),
                app: str = "github-actions", sender: str = "Codertocat") -> dict:
    run = payload("check_run.completed")
    suite = run["check_run"]["check_suite"]
    template = suite["pull_requests"][0]
    suite.update(head_sha=head, after=head, conclusion=conclusion, latest_check_runs_count=1,
                 check_runs_url=f"{suite['url']}/check-runs",
                 pull_requests=[{**template, "number": n, "head": {**template["head"], "sha": head}} for n in pulls],
                 head_commit={"id": head, "tree_id": "b" * 40, "message": "Fix the build", "timestamp":
                              "2019-05-15T15:20:30Z", "author": {"name": "Codertocat", "email": "c@example.com"},
                              "committer": {"name": "Codertocat", "email": "c@example.com"}})
    if not pulls:
        suite["head_branch"] = None  # a fork's, as GitHub sends it
    suite["app"] = {**suite["app"], "slug": app}
    data = {"action": "completed", "check_suite": suite, "repository": run["repository"], "sender": run["sender"],
            "installation": INSTALLATION}
    data["sender"] = {**data["sender"], "login": sender}
    return data


def workflow_run(conclusion: str = "failure", head: str = "a" * 40, pulls: tuple[int, ...] = (2,)) -> dict:
    data = payload("workflow_run.completed")
    repository = payload("check_run.completed")["repository"]
    item = data["workflow_run"]
    template = item["pull_requests"][0]
    base = {**template["base"], "repo": {**template["base"]["repo"], "id": repository["id"]}}
    item.update(head_sha=head, conclusion=conclusion,
                pull_requests=[{**template, "number": n, "base": base, "head": {**template["head"], "sha": head}}
                               for n in pulls])
    data.update(repository=repository, installation=INSTALLATION)
    data.pop("organization", None)
    return data


def comment(body: str = "Same problem here on Windows.", number: int = 1, user: str = "Codertocat",
            user_type: str = "User", comment_id: int = 5001) -> dict:
    data = payload("issue_comment.created", body)
    data["comment"]["id"] = comment_id
    data["comment"]["user"] = {**data["comment"]["user"], "login": user, "type": user_type}
    data["issue"]["number"] = number
    data["installation"] = INSTALLATION
    return data


def pull_request(action: str = "opened", label: str | None = None, sender: str = "Codertocat") -> dict:
    data = payload("pull_request.labeled" if action == "labeled" else "pull_request.opened")
    data["action"] = action
    if label is not None:
        data["label"] = {**data["label"], "name": label}
    data["pull_request"]["number"] = 2
    data["sender"] = {**data["sender"], "login": sender}
    data["installation"] = INSTALLATION
    return data
