"""Opens the pull request that writes an approved learned rule into the repository (issue 36): the
line under "## Learned rules" in the root `REVIEW.md`, or in the folder's for a folder rule, so the
learned memory becomes reviewed code. Through GitHub's REST API only, with the App's installation
token: no git, no checkout on the host.

    outcome = await open_pull_request(db, api, "o/r", rule_id, asker="maint", github_web="https://github.com")
    outcome.url or outcome.failure        # also recorded on the rule's row, for the settings page

A maintainer's approval on the settings page opens it right after the approval is stored (the
approval is never undone by what GitHub answers: the rule applies to reviews from then on); the
outcome is recorded on the rule's row: the pull request's number and URL, or why it failed, which
the settings page shows with a button to try again (also shown when the bot stopped between the
approval and the pull request). Each step is safe to repeat:

1. the rule must be approved and of this repository; one with a pull request recorded is done
   (no second one is opened);
2. the person asking (who approved, or who pressed retry) is asked about anew with the App's
   token, right before anything is written: maintain or admin, else nothing is written;
3. an open pull request from the rule's branch (the bot stopped after opening it): recorded, done;
4. the branch `learned_pr.branch` (the bot's own name) is made at the default branch's head
   (GET the repository, GET git/ref/heads/<default>, POST git/refs); one already there (a retry)
   is reused as it is;
5. the `REVIEW.md` on that branch is read (GET contents ?ref=branch), bounded as reviews read it
   (bot/review/rules_read.py): a regular file of at most `MAX_FILE_BYTES`, UTF-8 without NUL; a
   symlink (GitHub answers its target under another path), a folder or a submodule is refused,
   never written through; absent, the file is made;
6. the rule's line is appended (learned_pr.file_text: the existing text kept as it is) and written
   with PUT contents on the branch, with the sha of the file read; a branch that holds the line
   already (a retry) is not written again;
7. the pull request is opened: not a draft, from the branch into the default branch, its title and
   body the renderer's (learned_pr); GitHub's "already exists" is answered by finding it.
"""
from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from gidgethub import BadRequest, GitHubException

from bot.errors import BotError
from bot.github.client import RetryingAPI
from bot.record import render
from bot.review import learned, learned_pr
from bot.review.learned import APPROVED, CLOSED, MERGED, OPEN, Learned
from bot.review.rules_read import MAX_FILE_BYTES

log = logging.getLogger("bot.review.learned_pull")
MAINTAINERS = ("admin", "maintain")
MAX_REFRESHED = 10  # pull requests asked about per refresh (a settings page view)


class RulePullRefused(BotError):
    """Why the pull request is not opened, in words for the settings page."""


@dataclass(frozen=True)
class Outcome:
    url: str | None = None
    failure: str | None = None


@dataclass(frozen=True)
class Existing:
    """The rule file on the branch: its text ("" when absent) and the blob sha a PUT replaces."""

    text: str
    sha: str | None


async def open_pull_request(db: Any, api: RetryingAPI, repo: str, rule_id: int, asker: str,
                            github_web: str) -> Outcome:
    """The rule's pull request as the rule is now: opened, updated or opened anew unless it is up to
    date already; the outcome recorded."""
    rule = learned.one(db, repo, rule_id)
    if rule is None or rule.state != APPROVED:
        return Outcome(failure="Only an approved rule of this repository gets a pull request.")
    if up_to_date(rule):
        return Outcome(url=rule.pull_request)
    try:
        pull = await _opened(db, api, rule, asker, github_web)
    except RulePullRefused as refused:
        return _failed(db, rule, str(refused))
    except (GitHubException, httpx.HTTPError) as exc:
        return _failed(db, rule, f"GitHub answered: {api_error(exc)}")
    except (KeyError, TypeError, ValueError) as exc:  # an answer not in GitHub's documented shape
        return _failed(db, rule, f"GitHub's answer could not be read ({type(exc).__name__}); try again.")
    learned.record_pull_request(db, rule.id, int(pull["number"]), str(pull["html_url"]), learned_pr.file_path(rule),
                                str(learned_pr.line(rule)))
    log.info("learned rule %s of %s: pull request #%s", rule.id, repo, pull["number"])
    return Outcome(url=str(pull["html_url"]))


def up_to_date(rule: Learned) -> bool:
    """Its pull request is open or merged and writes the rule as it is now: nothing to do."""
    return rule.recorded and (rule.pull_request_path, rule.pull_request_line) == (
        learned_pr.file_path(rule), str(learned_pr.line(rule)))


async def refresh(db: Any, api: RetryingAPI, repo: str) -> int:
    """Each approved rule's pull request as GitHub says it is now (at most MAX_REFRESHED, one GET
    each; a merged one is final and not asked again); how many changed. A failure is logged and
    the stored state kept."""
    asked = [r for r in learned.approved(db, repo) if r.pull_request_number is not None
             and r.pull_request_state != MERGED][-MAX_REFRESHED:]
    changed = 0
    for rule in asked:
        try:
            state, _ = await _state_of(api, rule)
        except (RulePullRefused, GitHubException, httpx.HTTPError) as exc:
            log.warning("learned rule %s of %s: pull request state not read: %s", rule.id, repo, api_error(exc))
            continue
        if state.state != (rule.pull_request_state or OPEN):
            learned.record_pull_state(db, rule.id, state.state)
            changed += 1
    return changed


@dataclass(frozen=True)
class PullState:
    state: str  # OPEN, MERGED or CLOSED (closed without merging)
    branch: str | None  # its head branch, when that branch is in the repository itself


def pull_state(answer: Any, repo: str, number: int) -> PullState | None:
    """GitHub's answer for pull request `number` of `repo`, read through an allowlist: `number` the
    one asked, `state` open or closed, `merged` a boolean (never with open), `head.ref` a string kept
    only when `head.repo.full_name` is `repo`. Anything else: None (not read)."""
    if not isinstance(answer, dict) or type(answer.get("number")) is not int or answer["number"] != number:
        return None
    state, merged = answer.get("state"), answer.get("merged")
    if state not in ("open", "closed") or not isinstance(merged, bool) or (merged and state == "open"):
        return None
    return PullState(MERGED if merged else OPEN if state == "open" else CLOSED, _own_branch(answer.get("head"), repo))


def _own_branch(head: Any, repo: str) -> str | None:
    if not isinstance(head, dict) or not isinstance(head.get("repo"), dict) or head["repo"].get("full_name") != repo:
        return None
    return head["ref"] if isinstance(head.get("ref"), str) else None


def failure_outcome(db: Any, repo: str, rule_id: int, why: str) -> Outcome:
    """A failure before GitHub could be asked (no installation, no App key), recorded on the rule."""
    rule = learned.one(db, repo, rule_id)
    return _failed(db, rule, why) if rule is not None else Outcome(failure=why)


def _failed(db: Any, rule: Learned, why: str) -> Outcome:
    log.warning("learned rule %s of %s: no pull request: %s", rule.id, rule.repo, why)
    learned.record_pull_request_failure(db, rule.id, why)
    return Outcome(failure=why)


async def _opened(db: Any, api: RetryingAPI, rule: Learned, asker: str, github_web: str) -> dict:
    """The pull request that writes the rule as it is now: the recorded one while it is open (its
    line replaced), else one from a branch of the rule's own at the default branch's head."""
    await _check_maintainer(api, rule.repo, asker)
    previous, answer = await _state_of(api, rule) if rule.pull_request_number is not None else (None, {})
    if previous is not None:
        learned.record_pull_state(db, rule.id, previous.state)
    if previous is not None and previous.state == OPEN:
        if previous.branch is None or not learned_pr.is_branch_of(previous.branch, rule):
            raise RulePullRefused(f"Pull request #{rule.pull_request_number} is not on the bot's branch for this "
                                  "rule; edit REVIEW.md there by hand, or close it and try again.")
        await _write_rule(api, rule, previous.branch)
        return await _retitled(api, rule, answer, github_web)
    branch = render.required(learned_pr.branch(rule, rule.pull_request_number if previous else None))
    base = str((await api.getitem(f"/repos/{rule.repo}"))["default_branch"])
    found = await _open_pull_from(api, rule.repo, branch)
    if found is None:
        await _make_branch(api, rule.repo, branch, await _head(api, rule.repo, base))
    await _write_rule(api, rule, branch)
    if found is not None:  # opened before the bot stopped
        return await _retitled(api, rule, found, github_web)
    return await _create_pull(api, rule, branch, base, github_web)


async def _state_of(api: RetryingAPI, rule: Learned) -> tuple[PullState, dict]:
    number = int(rule.pull_request_number or 0)
    answer = await api.getitem(f"/repos/{rule.repo}/pulls/{number}")
    state = pull_state(answer, rule.repo, number)
    if state is None:
        raise RulePullRefused(f"GitHub's answer about pull request #{number} could not be read; try again.")
    return state, answer


async def _retitled(api: RetryingAPI, rule: Learned, pull: dict, github_web: str) -> dict:
    """`pull` with the title and body of the rule as it is now (an edit: PATCHed when they differ)."""
    wanted = {"title": render.required(learned_pr.title(rule)),
              "body": render.required(learned_pr.body(rule, github_web))}
    if all(pull.get(key) == value for key, value in wanted.items()):
        return pull
    updated: dict = await api.patch(f"/repos/{rule.repo}/pulls/{int(pull['number'])}", data=wanted)
    return updated


async def _check_maintainer(api: RetryingAPI, repo: str, login: str) -> None:
    """The run-time check: the person's permission now, as GitHub tells the App."""
    try:
        answer = await api.getitem(f"/repos/{repo}/collaborators/{quote(login, safe='')}/permission")
    except BadRequest as exc:
        if int(exc.status_code) != 404:
            raise
        answer = {}
    role = answer.get("role_name") or answer.get("permission")
    if role not in MAINTAINERS:
        raise RulePullRefused(f"{login} does not maintain {repo} (GitHub says: {role or 'no access'}); "
                      "only a maintainer's approval opens the pull request.")


async def _open_pull_from(api: RetryingAPI, repo: str, branch: str) -> dict | None:
    owner = repo.split("/", 1)[0]
    found = await api.getitem(f"/repos/{repo}/pulls?head={owner}:{branch}&state=open")
    return found[0] if found else None


async def _head(api: RetryingAPI, repo: str, base: str) -> str:
    ref = await api.getitem(f"/repos/{repo}/git/ref/heads/{quote(base, safe='/')}")
    return str(ref["object"]["sha"])


async def _make_branch(api: RetryingAPI, repo: str, branch: str, sha: str) -> None:
    try:
        await api.post(f"/repos/{repo}/git/refs", data={"ref": f"refs/heads/{branch}", "sha": sha})
    except BadRequest as exc:
        if int(exc.status_code) != 422 or "already exists" not in api_error(exc):
            raise
        log.info("branch %s of %s exists already (a retry): reused", branch, repo)


async def _write_rule(api: RetryingAPI, rule: Learned, branch: str) -> None:
    """The rule's line in its REVIEW.md on `branch` (in place of the one it wrote, else added), and
    out of the file it was written to before when its folder was edited."""
    path = learned_pr.file_path(rule)
    if rule.pull_request_path and rule.pull_request_path != path:
        await _take_out(api, rule, branch, rule.pull_request_path)
    existing = await read_rule_file(api, rule.repo, path, branch)
    text = learned_pr.file_text(existing.text, rule)
    if text == existing.text:
        return  # written by an earlier try
    await _put(api, rule, branch, path, text, existing.sha)


async def _take_out(api: RetryingAPI, rule: Learned, branch: str, path: str) -> None:
    """The rule's line out of `path` on `branch`; a file left empty is deleted."""
    existing = await read_rule_file(api, rule.repo, path, branch)
    text = learned_pr.without(existing.text, rule)
    if text == existing.text or existing.sha is None:
        return
    if not learned_pr.emptied(text):
        await _put(api, rule, branch, path, text, existing.sha)
        return
    await api.delete(f"/repos/{rule.repo}/contents/{quote(path)}",
                     data={"message": render.required(learned_pr.title(rule)), "branch": branch, "sha": existing.sha})


async def _put(api: RetryingAPI, rule: Learned, branch: str, path: str, text: str, sha: str | None) -> None:
    data = {"message": render.required(learned_pr.title(rule)), "branch": branch,
            "content": base64.b64encode(text.encode()).decode()}
    if sha:
        data["sha"] = sha
    await api.put(f"/repos/{rule.repo}/contents/{quote(path)}", data=data)


async def read_rule_file(api: RetryingAPI, repo: str, path: str, branch: str) -> Existing:
    """The rule file on the branch, bounded; RulePullRefused when it is not one the bot may append to."""
    try:
        answer = await api.getitem(f"/repos/{repo}/contents/{quote(path)}?ref={quote(branch, safe='')}")
    except BadRequest as exc:
        if int(exc.status_code) == 404:
            return Existing("", None)
        raise
    if kind := _not_a_file(answer, path):
        raise RulePullRefused(f"{path} is {kind}, not a file; add the rule to it by hand.")
    if int(answer.get("size") or 0) > MAX_FILE_BYTES or answer.get("encoding") != "base64":
        raise RulePullRefused(f"{path} is larger than {MAX_FILE_BYTES >> 10} KiB (reviews do not read it either); "
                      "add the rule to it by hand.")
    return Existing(_text(path, base64.b64decode(answer.get("content") or "")), str(answer["sha"]))


def _not_a_file(answer: Any, path: str) -> str | None:
    """What GitHub answered instead of the regular file at `path`: a folder's listing, a symlink (to
    a file: that file, under its own path), a submodule; None for the file itself."""
    if not isinstance(answer, dict):
        return "a folder"
    if answer.get("type") == "file":
        return None if answer.get("path") == path else "a symlink"
    return f"a {answer.get('type') or 'thing'}"


def _text(path: str, data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES or b"\0" in data:
        raise RulePullRefused(f"{path} is not a text file of at most {MAX_FILE_BYTES >> 10} KiB; add the rule by hand.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RulePullRefused(f"{path} is not UTF-8 text; add the rule to it by hand.") from None


async def _create_pull(api: RetryingAPI, rule: Learned, branch: str, base: str, github_web: str) -> dict:
    data = {"title": render.required(learned_pr.title(rule)), "head": branch, "base": base,
            "body": render.required(learned_pr.body(rule, github_web)), "draft": False}
    try:
        created: dict = await api.post(f"/repos/{rule.repo}/pulls", data=data)
        return created
    except BadRequest as exc:
        if "already exists" not in api_error(exc):
            raise
    found = await _open_pull_from(api, rule.repo, branch)
    if found is None:
        raise RulePullRefused("GitHub says the pull request exists but does not list it; try again in a moment.")
    return found


def api_error(exc: Exception) -> str:
    """GitHub's message and its validation errors, in one line."""
    errors = getattr(exc, "errors", None) or []
    details = [e.get("message", "") for e in errors if isinstance(e, dict)]
    return "; ".join([str(exc) or type(exc).__name__, *details]).strip("; ")[:300]
