"""Webhook payloads of the events automations run on, each one GitHub could send (tests/automations/
test_event_payloads.py validates every one against GitHub's published webhook schemas).

- `check_suite`: the recorded examples hold none, so it is made from the recorded `check_run.completed`
  payload's own suite (same repository, pull request and app), with the fields a check_suite
  event adds (`latest_check_runs_count`, `check_runs_url`, `head_commit`).
- `workflow_run`: octokit's recorded `workflow_run.completed` with pull requests, moved to the
  recorded check_run's repository (the example's pull request belongs to another one).
- `issue_comment`, `pull_request`: the recorded ones (tests/fixtures/github).
- `dependabot_alert`, `code_scanning_alert` (created): built from the webhook schema's required
  fields (the recorded examples hold none), on the recorded check_run's repository.
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


def _alert_base() -> dict:
    run = payload("check_run.completed")
    return {"repository": run["repository"], "installation": INSTALLATION}


def dependabot_alert(number: int = 3, package: str = "lodash", summary: str = "Prototype Pollution in lodash") -> dict:
    """`dependabot_alert.created`, built from GitHub's webhook schema (no recorded example)."""
    base = _alert_base()
    repo = base["repository"]["full_name"]
    pkg = {"ecosystem": "npm", "name": package}
    advisory = {"ghsa_id": "GHSA-p6mc-m468-83gw", "cve_id": "CVE-2020-8203", "summary": summary,
                "description": "Versions of lodash before 4.17.19 are vulnerable to prototype pollution.",
                "vulnerabilities": [{"package": pkg, "severity": "high", "vulnerable_version_range": "< 4.17.19",
                                     "first_patched_version": {"identifier": "4.17.19"}}],
                "severity": "high", "cvss": {"vector_string": None, "score": 7.4},
                "cwes": [{"cwe_id": "CWE-1321", "name": "Prototype Pollution"}],
                "identifiers": [{"type": "GHSA", "value": "GHSA-p6mc-m468-83gw"},
                                {"type": "CVE", "value": "CVE-2020-8203"}],
                "references": [{"url": "https://nvd.nist.gov/vuln/detail/CVE-2020-8203"}],
                "published_at": "2020-07-15T19:15:00Z", "updated_at": "2021-10-01T00:00:00Z", "withdrawn_at": None}
    alert = {"number": number, "state": "open",
             "dependency": {"package": pkg, "manifest_path": "package-lock.json", "scope": "runtime"},
             "security_advisory": advisory,
             "security_vulnerability": advisory["vulnerabilities"][0],
             "url": f"https://api.github.com/repos/{repo}/dependabot/alerts/{number}",
             "html_url": f"https://github.com/{repo}/security/dependabot/{number}",
             "created_at": "2026-12-07T10:00:00Z", "updated_at": "2026-12-07T10:00:00Z",
             "dismissed_at": None, "dismissed_by": None, "dismissed_reason": None, "dismissed_comment": None,
             "fixed_at": None}
    return {"action": "created", "alert": alert, **base, "sender": GITHUB_ORG}


def code_scanning_alert(number: int = 4, rule: str = "js/sql-injection", path: str = "src/db.js",
                        description: str = "Database query built from user-controlled sources") -> dict:
    """`code_scanning_alert.created`, built from GitHub's webhook schema (no recorded example)."""
    base = _alert_base()
    repo = base["repository"]["full_name"]
    instance = {"ref": "refs/heads/main", "analysis_key": ".github/workflows/codeql.yml:analyze",
                "environment": '{"language":"javascript"}', "state": "open", "commit_sha": "c" * 40,
                "message": {"text": "This query depends on a user-provided value."},
                "location": {"path": path, "start_line": 12, "end_line": 12, "start_column": 5, "end_column": 40},
                "classifications": []}
    alert = {"number": number, "created_at": "2026-12-07T10:00:00Z",
             "url": f"https://api.github.com/repos/{repo}/code-scanning/alerts/{number}",
             "html_url": f"https://github.com/{repo}/security/code-scanning/{number}",
             "instances": [instance], "most_recent_instance": instance, "state": "open",
             "dismissed_by": None, "dismissed_at": None, "dismissed_reason": None,
             "rule": {"id": rule, "severity": "error", "description": description},
             "tool": {"name": "CodeQL", "version": "2.15.0"}}
    return {"action": "created", "alert": alert, "ref": "refs/heads/main", "commit_oid": "c" * 40, **base,
            "sender": GITHUB_ORG}


_USERS = "https://api.github.com/users/github"
# the sender of an alert's events: GitHub itself (the schema holds it to these values)
GITHUB_ORG = {"login": "github", "id": 9919, "node_id": "MDEyOk9yZ2FuaXphdGlvbjk5MTk=",
              "avatar_url": "https://avatars.githubusercontent.com/u/9919?v=4", "gravatar_id": "",
              "url": _USERS, "html_url": "https://github.com/github", "followers_url": f"{_USERS}/followers",
              "following_url": f"{_USERS}/following{{/other_user}}", "gists_url": f"{_USERS}/gists{{/gist_id}}",
              "starred_url": f"{_USERS}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{_USERS}/subscriptions",
              "organizations_url": f"{_USERS}/orgs", "repos_url": f"{_USERS}/repos",
              "events_url": f"{_USERS}/events{{/privacy}}", "received_events_url": f"{_USERS}/received_events",
              "type": "Organization", "site_admin": False}
