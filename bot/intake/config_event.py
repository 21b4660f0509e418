"""An event after which the bot reads a repository's `.github/bot.yml` again: a push to the default
branch that changed it, and the App installed on repositories. The intake reads no repository: it
queues one cheap job per repository (marked `automatic` of kind `config`), and the worker reads the
file from GitHub, stores it when it is valid, and refuses it on the commit when it is not
(bot/automations/config_read.py).

    jobs = candidates("push", payload)       # [ConfigJob(delivery_suffix, spec)], [] when nothing to read
    read = read_detail(spec.automatic.detail)  # ConfigRead(reason, after, commit), or None

Every payload field read is named here and checked against its allowlist; a payload outside it
queues nothing (logged). A push counts only on `refs/heads/<the default branch>`, and only when one
of its commits names `.github/bot.yml` among its added, modified or removed files; when the commit
list cannot tell (a new branch, a forced push, no commits listed, or MAX_COMMITS listed: the list
may be cut) the file is read anyway, without knowing which commit changed it (so is one whose commit
list is outside the allowlist: reading is harmless, and stores only a valid file). An installation
reads each repository it names, at most MAX_REPOSITORIES (the others are read on first use, as
before). What the job carries past the queue is the detail: `push after=<sha> [commit=<sha>]` or
`installation`, read back by `read_detail` through the same allowlist.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from bot.intake.grammar import Command
from bot.intake.spec import Automatic, JobSpec
from bot.workspace.repo_config import CONFIG_PATH

KIND = "config"
EVENTS = frozenset({"push", "installation", "installation_repositories"})
INSTALLED = {"installation": ("created", "repositories"), "installation_repositories": ("added", "repositories_added")}
MAX_REPOSITORIES = 100  # per installation delivery
MAX_COMMITS = 20  # a push lists at most 20 (its webhook schema; GitHub says 2,048 now): this many may be cut
log = logging.getLogger("bot.intake.config_event")
_SHA = re.compile(r"[0-9a-f]{40}")
_ZERO = "0" * 40
_REPO = re.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")
_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?")
_BRANCH = re.compile(r"[^\x00-\x20\x7f~^:?*\[\\]{1,255}")


@dataclass(frozen=True)
class ConfigJob:
    delivery_suffix: str  # added to the delivery id: one job per repository of an installation
    spec: JobSpec


@dataclass(frozen=True)
class ConfigRead:
    """What a config job's detail carries: why the file is read, and for a push its head commit and
    the last commit that changed the file ("" when the commit list could not tell)."""

    reason: str  # "push" or "installation"
    after: str = ""
    commit: str = ""

    def detail(self) -> str:
        if self.reason != "push":
            return self.reason
        return f"push after={self.after}" + (f" commit={self.commit}" if self.commit else "")


def candidates(event: str, data: dict[str, Any]) -> list[ConfigJob]:
    """The jobs that read `.github/bot.yml` after this event; [] for anything else."""
    if event == "push":
        return _push(data)
    if event in INSTALLED and data.get("action") == INSTALLED[event][0]:
        return _installed(event, data)
    return []


def read_detail(detail: str) -> ConfigRead | None:
    """The detail a config job carries, or None when any word is outside the allowlist."""
    reason, *words = detail.split(" ")
    if reason == "installation":
        return ConfigRead("installation") if not words else None
    fields = dict(word.partition("=")[::2] for word in words)
    if reason != "push" or len(fields) != len(words) or not set(fields) <= {"after", "commit"}:
        return None
    after, commit = fields.get("after", ""), fields.get("commit", "")
    if not _is_sha(after) or ("commit" in fields and not _is_sha(commit)):
        return None
    return ConfigRead("push", after, commit)


def _push(data: dict[str, Any]) -> list[ConfigJob]:
    repository = _dict(data.get("repository"))
    branch = repository.get("default_branch")
    if not isinstance(branch, str) or not _BRANCH.fullmatch(branch) or data.get("ref") != f"refs/heads/{branch}":
        return []  # another branch: only the default branch defines automations
    after, before = data.get("after"), data.get("before")
    if not _is_sha(after) or after == _ZERO or not _is_sha(before):
        return []  # the branch was deleted, or a payload outside the allowlist
    touched = _touching_commit(data, str(before))
    if touched is None:
        return []
    read = ConfigRead("push", str(after), touched)
    return _job(data, repository, read, f"config:push:{repository.get('id')}:{before}:{after}", "")


def _touching_commit(data: dict[str, Any], before: str) -> str | None:
    """The last listed commit that names the file ("" when the list cannot tell), or None when the
    list is whole and none does."""
    commits = data.get("commits")
    if not isinstance(commits, list) or not commits or len(commits) >= MAX_COMMITS or before == _ZERO \
            or data.get("forced") is not False:
        return ""
    touched = None
    for commit in commits:
        if not isinstance(commit, dict) or not _is_sha(commit.get("id")):
            return ""
        if any(_names_config(commit.get(kind)) for kind in ("added", "modified", "removed")):
            touched = str(commit["id"])
    return touched


def _names_config(files: object) -> bool:
    return isinstance(files, list) and CONFIG_PATH in files


def _installed(event: str, data: dict[str, Any]) -> list[ConfigJob]:
    listed = data.get(INSTALLED[event][1])
    if not isinstance(listed, list):
        return []
    if len(listed) > MAX_REPOSITORIES:
        log.info("%s names %d repositories: the first %d are read now, the others on first use", event,
                 len(listed), MAX_REPOSITORIES)
    jobs = []
    for repository in map(_dict, listed[:MAX_REPOSITORIES]):
        jobs += _job(data, repository, ConfigRead("installation"), None, f" {repository.get('full_name')}")
    return jobs


def _job(data: dict[str, Any], repository: dict[str, Any], read: ConfigRead, key: str | None,
         suffix: str) -> list[ConfigJob]:
    repo, repo_id = repository.get("full_name"), repository.get("id")
    installation = _dict(data.get("installation")).get("id")
    if not is_repo_name(repo) or not _is_id(repo_id) or not _is_id(installation):
        log.info("%s: a repository or installation outside the allowlist: nothing read", read.reason)
        return []
    sender = _dict(data.get("sender"))
    login = sender.get("login")
    author = login if isinstance(login, str) and _LOGIN.fullmatch(login) else ""
    spec = JobSpec(repo=str(repo), number=0, author=author, command=Command(kind="run"), repo_id=repo_id,
                   installation_id=installation, author_type="Bot" if sender.get("type") == "Bot" else "User",
                   title="", trigger_key=key, automatic=Automatic(kind=KIND, detail=read.detail()))
    return [ConfigJob(suffix, spec)]


def queue_key(repo: str) -> str:
    """The queue's ordering key of a repository's config jobs: read one after the other, in order."""
    return f"{repo} config"


def is_repo_name(value: object) -> bool:
    """`owner/name` as GitHub spells them: no other character, and neither part `.` nor `..`."""
    return isinstance(value, str) and bool(_REPO.fullmatch(value)) and not {".", ".."} & set(value.split("/"))


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and bool(_SHA.fullmatch(value))


def _is_id(value: object) -> bool:
    return type(value) is int and value > 0


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
