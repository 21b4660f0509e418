"""Webhook payloads after which the bot reads `.github/bot.yml` again, each one GitHub could send
(tests/automations/test_config_event.py validates them against GitHub's published webhook schemas).

- `push`: the recorded examples hold none, so it is built from the webhook schema's required fields,
  on the recorded check_run's repository (its `default_branch` is the branch pushed to).
- `installation.created`, `installation_repositories.added`: octokit's recorded examples
  (tests/fixtures/github), their installation given the id the fake GitHub mints tokens for.
"""
from __future__ import annotations

import difflib

from tests.automations.payloads import INSTALLATION
from tests.spine.helpers import payload

CONFIG = ".github/bot.yml"


def patch(old: bytes, new: bytes, context: int = 3) -> str:
    """A file's `patch` as GitHub's commit API gives it: the unified diff from its first `@@`."""
    lines = list(difflib.unified_diff(old.decode().splitlines(), new.decode().splitlines(), lineterm="", n=context))
    return "\n".join(lines[2:])


def commit(sha: str, added: tuple[str, ...] = (), modified: tuple[str, ...] = (), removed: tuple[str, ...] = (),
           message: str = "Change the automations") -> dict:
    person = {"name": "Codertocat", "email": "c@example.com", "username": "Codertocat"}
    return {"id": sha, "tree_id": "b" * 40, "distinct": True, "message": message,
            "timestamp": "2026-12-07T10:00:00Z", "url": f"https://github.com/Codertocat/Hello-World/commit/{sha}",
            "author": person, "committer": person, "added": list(added), "removed": list(removed),
            "modified": list(modified)}


def push(after: str = "a" * 40, before: str = "9" * 40, commits: list[dict] | None = None, branch: str | None = None,
         repo: str | None = None, forced: bool = False, repo_id: int | None = None) -> dict:
    """A push to the repository's default branch (or `branch`), by default one commit modifying the file."""
    repository = payload("check_run.completed")["repository"]
    if repo is not None:
        repository.update(full_name=repo, name=repo.split("/")[1])
    if repo_id is not None:
        repository["id"] = repo_id
    listed = [commit(after, modified=(CONFIG,))] if commits is None else commits
    sender = payload("check_run.completed")["sender"]
    ref = f"refs/heads/{branch or repository['default_branch']}"
    return {"ref": ref, "before": before, "after": after, "created": before == "0" * 40,
            "deleted": after == "0" * 40, "forced": forced, "base_ref": None,
            "compare": f"https://github.com/{repository['full_name']}/compare/{before[:12]}...{after[:12]}",
            "commits": listed, "head_commit": listed[-1] if listed else None, "repository": repository,
            "pusher": {"name": "Codertocat", "email": "c@example.com"}, "sender": sender,
            "installation": INSTALLATION}


def installation_created(repos: list[tuple[str, int]] | None = None) -> dict:
    data = payload("installation.created")
    if repos is not None:
        data["repositories"] = [{"id": rid, "node_id": f"R_{rid}", "name": name.split("/")[1], "full_name": name,
                                 "private": False} for name, rid in repos]
    data["installation"]["id"] = INSTALLATION["id"]
    return data


def repositories_added(repos: list[tuple[str, int]] | None = None) -> dict:
    data = payload("installation_repositories.added")
    if repos is not None:
        data["repositories_added"] = [{"id": rid, "node_id": f"R_{rid}", "name": name.split("/")[1],
                                       "full_name": name, "private": False} for name, rid in repos]
    data["installation"]["id"] = INSTALLATION["id"]
    return data
