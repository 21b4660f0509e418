"""The bot's own effects after an episode (the agent never holds a token): commit, push, open the pull request.

The agent never commits or pushes. After the episode the bot stages what changed in the job's
worktree, refuses protected paths, commits as itself with `Co-authored-by:` the requester, and:

- from an issue: pushes `bot/<agent>/<issue>-<slug>` and opens a PR that links the issue;
- from a same-repository PR: pushes to its head branch (or, with `open_pull_requests`, opens a
  PR against that head);
- from a fork PR: pushes to the fork only if its author allowed maintainers to modify it AND the
  repository allows it (`allow_fork_push`); otherwise the change comes back as a diff to post.

A push rejected because the branch moved is fetched, rebased on top once and retried.

The agent wrote the tree, so git over it is hardened (bot/workspace/git.py): the tree is first
walked for repositories the agent planted (refused before any git runs, tree_scan.py); the index
is then the base tree plus each changed path as the bot lstat'ed it, hashed with --no-filters,
never `git add`; the commit is `commit-tree` (no hooks, no status); everything that does not need
the tree (hashing, the index, commit, push, diffs) runs with the bot's git dir and no work tree.

The index is built in staging.py, the push (and its one rebase) is push.py, the request and its
outcome are outcome.py; this module decides what may be committed and where it goes.
"""
from __future__ import annotations

import codecs
import logging
from typing import cast

import gidgethub
import httpx
from gidgethub.abc import GitHubAPI

from bot.record import leaks, render
from bot.record.redact import running_secrets
from bot.record.render import Rendered
from bot.workspace import paths, tree_scan
from bot.workspace.outcome import Outcome, Request
from bot.workspace.push import push, with_diff
from bot.workspace.staging import (
    MAX_FILE_BYTES,
    bare_git,
    changed_paths,
    nested_repositories,
    oversized_files,
    stage,
    symlinks,
)
from bot.workspace.worktrees import Worktree

log = logging.getLogger(__name__)


def _never_committed(worktree: Worktree, what: str, paths: list[str], files: list[str]) -> Outcome:
    listed = ", ".join(render.code(p) for p in paths[:10])  # the agent's names
    return Outcome("refused", f"I did not commit anything: the change adds {what} ({listed}), which "
                   "the bot never commits.", worktree.base_sha, files=files)


async def apply(worktree: Worktree, request: Request, api: GitHubAPI, token: str | None = None) -> Outcome:
    """Turn the worktree's changes into a commit and put it where the request belongs."""
    planted = await _planted_repositories(worktree)
    if planted:
        return planted
    changed = await changed_paths(worktree)
    oversized = oversized_files(worktree, changed)
    if oversized:
        listed = ", ".join(f"{render.code(path)} ({size >> 20} MiB)" for path, size in oversized[:10])
        return Outcome("refused", f"I did not commit anything: the change adds files larger than "
                       f"{MAX_FILE_BYTES >> 20} MiB ({listed}); GitHub refuses or warns on files that "
                       "large, and the bot never commits them.", worktree.base_sha,
                       files=[path for path, _ in oversized])
    files = await stage(worktree, changed)
    if not files:
        return Outcome("none", "No files changed, so nothing was committed.", worktree.base_sha)
    unsafe = [paths.printable(path) for path in files
              if paths.forbidden_character(path) or paths.ambiguous_component(path)]
    if unsafe:
        return _never_committed(worktree, "paths with control or invisible characters or names made "
                                "of dots and spaces", unsafe, files)
    metadata = [path for path in files if paths.is_git_metadata(path)]
    if metadata:
        return _never_committed(worktree, "paths that are `.git` on a case-insensitive or Windows "
                                "checkout", metadata, files)
    protected = worktree.config.protected_paths
    refused = [(path, pattern) for path in files if (pattern := paths.protected_by(path, protected))]
    if refused:
        return _refusal(worktree, refused, files)
    nested = await nested_repositories(worktree, files)
    if nested:
        return _never_committed(worktree, "nested git repositories", nested, files)
    links = await symlinks(worktree, files)
    shadowing = [(path, pattern) for path in links if (pattern := paths.shadowed_by(path, protected))]
    if shadowing:
        return _refusal(worktree, shadowing, files)
    escaping = await _escaping_symlinks(worktree, links)
    if escaping:
        return _never_committed(worktree, "symbolic links that point outside the repository or into "
                                "`.git`", escaping, files)
    leaked = await _secrets_leaving(worktree, request, files, token)
    if leaked:
        return Outcome("refused", f"I did not commit anything: {leaks.describe(leaked)}. The bot never "
                       "publishes a secret of a run; remove it from the change (and rotate it if it is "
                       "real).", worktree.base_sha, files=files)
    sha = await _commit(worktree, request)
    shortstat = (await bare_git(worktree, "diff", "--shortstat", "--no-ext-diff", "--no-textconv",
                            worktree.base_sha, sha)).strip()
    done = Outcome("pushed", "", worktree.base_sha, sha, shortstat, files)
    return await _deliver(worktree, request, api, token, done)


async def _deliver(wt: Worktree, request: Request, api: GitHubAPI, token: str | None, done: Outcome) -> Outcome:
    if refused := await request.refusal():  # right before the push: the permission, asked anew
        return Outcome("refused", refused, wt.base_sha, files=done.files)
    pull, cfg = request.pull, wt.config
    if pull is None:
        return await _push_and_open(wt, request, api, token, done, wt.full_name,
                                    _branch_name(request, str(request.number)), wt.default_branch)
    head_repo = (pull.get("head") or {}).get("repo") or {}
    head_name, head_ref = head_repo.get("full_name"), pull["head"]["ref"]
    if head_name == wt.full_name:
        if cfg.open_pull_requests:
            return await _push_and_open(wt, request, api, token, done, wt.full_name,
                                        _branch_name(request, f"pr{request.number}"), head_ref)
        return await push(wt, token, done, wt.full_name, head_ref)
    if head_name and pull.get("maintainer_can_modify") and cfg.allow_fork_push:
        return await push(wt, token, done, head_name, head_ref)
    why = ("the fork is gone" if not head_name else
           "the author did not allow edits by maintainers" if not pull.get("maintainer_can_modify")
           else "this repository's .github/bot.yml does not set allow_fork_push")
    return await with_diff(wt, done, "diff", f"This pull request comes from a fork and {why}, "
                            "so here is the change as a diff to apply.")


async def _push_and_open(wt: Worktree, request: Request, api: GitHubAPI, token: str | None, done: Outcome,
                         repo: str, branch: str, base: str) -> Outcome:
    pushed = await push(wt, token, done, repo, branch)
    if pushed.kind != "pushed":
        return pushed
    if refused := await request.refusal():  # and again right before the pull request
        pushed.message += f" No pull request was opened: {refused}"
        return pushed
    try:
        pr = await _open_pull(api, wt, request, pushed, branch, base)
    except (gidgethub.GitHubException, httpx.HTTPError) as exc:
        pushed.message += f" I could not open a pull request ({_api_error(exc)}); open one from the branch."
        return pushed
    pushed.kind, pushed.pr_number, pushed.pr_url = "pull_request", pr["number"], pr.get("html_url")
    link = f"[pull request #{pr['number']}]({pr['html_url']})" if pr.get("html_url") else \
        f"pull request #{pr['number']}"
    pushed.message = f"Opened {link} from {pushed.branch_link()} ({pushed.diffstat})."
    return pushed


async def _open_pull(api: GitHubAPI, wt: Worktree, request: Request, done: Outcome, branch: str,
                     base: str) -> dict:
    owner = cast(str, done.repo).split("/")[0]
    data = {"title": render.required(_title(request)), "head": branch, "base": base,
            "body": render.required(_pull_body(wt, request, done)), "maintainer_can_modify": True,
            **({"draft": True} if request.draft else {})}
    try:
        return await api.post(f"/repos/{done.repo}/pulls", data=data)
    except gidgethub.BadRequest as exc:
        if "already exists" not in _api_error(exc):
            raise
    existing = await api.getitem(f"/repos/{done.repo}/pulls?head={owner}:{branch}&state=open")
    if not existing:
        raise gidgethub.GitHubException("a pull request exists for the branch but could not be found")
    return existing[0]


def _pull_body(wt: Worktree, request: Request, done: Outcome) -> Rendered:
    """The issue it was asked from (the only closing keyword: `render.closing`), who asked, the
    request quoted inert (no one it names is notified again, no issue it names is closed)."""
    link = render.closing(request.number, wt.config.close_issue) if request.pull is None else \
        render.outgoing(f"For #{request.number}")
    return render.concat(link, render.outgoing("\n\nRequested by "), render.words("@" + request.requester_login),
                         render.outgoing(":\n\n"), render.quote(request.text, limit=500),
                         render.outgoing(f"\n\nMade by {request.agent} · base {done.base_sha[:7]} · {done.diffstat}\n"))


async def _planted_repositories(wt: Worktree) -> Outcome | None:
    """A repository of the agent's anywhere in the tree (a `.git` in any spelling below the top)
    ends the effect before any git runs over the tree: git would read its config."""
    found = tree_scan.scan(wt.path, await wt.submodules())
    if found.repositories:
        return _never_committed(wt, "nested git repositories or git metadata in another spelling",
                                found.repositories, [])
    if found.unreadable:
        return _never_committed(wt, "folders the bot cannot read", found.unreadable, [])
    if found.special:
        return _never_committed(wt, "special files (FIFOs, sockets or devices)", found.special, [])
    return None


async def _escaping_symlinks(wt: Worktree, links: dict[str, str]) -> list[str]:
    """Symlinks whose target is absolute, climbs out of the repository or reaches into a `.git`
    dir in any spelling a case-insensitive, NTFS or HFS+ checkout follows (`.GIT`, `.git.`,
    `GIT~1`, `..\\x`; bot/bridge/paths.py): a checkout (a CI job) would follow them to host files
    or to the clone's credentials."""
    return [path for path, target in links.items() if paths.link_escapes(path, target)]


async def _commit(wt: Worktree, request: Request) -> str:
    """The index as a commit on the base, and HEAD moved to it: plumbing only (`git commit`
    would run hooks and a status over the tree)."""
    tree = (await bare_git(wt, "write-tree")).strip()
    message = render.required(_commit_message(wt, request)).encode()
    sha = (await bare_git(wt, "commit-tree", tree, "-p", wt.base_sha, "-F", "-", stdin=message)).strip()
    await bare_git(wt, "update-ref", "-m", "bot: commit", "HEAD", sha)
    return sha


def _commit_message(wt: Worktree, request: Request) -> Rendered:
    """Subject and body are plain text GitHub reads for mentions and closing keywords on merge:
    the request's words rendered (bot.record.render), nothing in them closes or notifies."""
    login, uid = request.requester_login, request.requester_id
    # GitHub attributes <id>+<login>@users.noreply.github.com; without an id, the older form
    noreply = f"{uid}+{login}@users.noreply.github.com" if uid else f"{login}@users.noreply.github.com"
    asked = " ".join(request.text.split())[:500]
    said = render.plain(f"Requested by @{login} in {wt.full_name}#{request.number} ({request.agent}): {asked}")
    return render.concat(_title(request), render.plain("\n\n"), said,
                         render.plain(f"\n\nCo-authored-by: {login} <{noreply}>\n"))


def _title(request: Request) -> Rendered:
    """The request's first line; a terse one ("fix this") gets the thread's title after it. Both are
    someone else's words (the issue's title is an outsider's): no mention or closing keyword acts."""
    first = next((line.strip() for line in request.text.splitlines() if line.strip()), "")
    if len(first.split()) < 4 and request.title:
        first = f"{first.rstrip('.!')}: {request.title}" if first else request.title
    first = first or f"Changes requested by @{request.requester_login}"
    return render.title(first[0].upper() + first[1:])


def _branch_name(request: Request, prefix: str) -> Rendered:
    return render.branch(f"bot/{request.agent}/{prefix}", request.title or request.text)


def _refusal(wt: Worktree, refused: list[tuple[str, str]], files: list[str]) -> Outcome:
    listed = ", ".join(f"{render.code(path)} (matches {render.code(pattern)})" for path, pattern in refused[:10])
    more = f" and {len(refused) - 10} more" if len(refused) > 10 else ""
    message = (f"I did not commit anything: the change touches protected paths: {listed}{more}. "
               f"They are protected by {wt.config.source}; a maintainer can change "
               "`protected_paths` on the default branch, or make this change by hand.")
    return Outcome("refused", message, wt.base_sha, files=files)


def _api_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None) or []
    details = [e.get("message", "") for e in errors if isinstance(e, dict)]
    return "; ".join([str(exc), *details]).strip("; ")


async def _secrets_leaving(wt: Worktree, request: Request, files: list[str], token: str | None) -> list:
    """The gate before anything leaves (threat model class 6): what the commit, the push, the branch
    and the pull request would publish, scanned (bot.record.leaks) for the secrets of the jobs
    running now and for token shapes: the file names, the added lines (binary files as text),
    the branch name, the pull request's title and the commit message (which carries the request
    that the pull request's body quotes)."""
    secrets = [*running_secrets(), *([token] if token else [])]
    diff = await bare_git(wt, "diff", "--cached", "--text", "--no-color", "--no-ext-diff", "--no-textconv",
                      "--no-renames", "--unified=0", "--src-prefix=a/", "--dst-prefix=b/", wt.base_sha)
    added = _added_lines(diff)
    names = leaks.scan({"a file name": "\n".join(files)}, secrets)
    found = names + leaks.scan({"the added lines": "\n".join(added.values())}, secrets)
    if found and not names:  # say which file, unless the names are what must not be repeated
        found = [leak for path, text in added.items()
                 for leak in leaks.scan({f"the added lines of `{path}`": text}, secrets)] or found
    branches = {_branch_name(request, str(request.number)), _branch_name(request, f"pr{request.number}")}
    return found + leaks.scan({"the branch name": "\n".join(sorted(branches)),
                               "the pull request title": _title(request),
                               "the commit message": _commit_message(wt, request)}, secrets)


def _added_lines(diff: str) -> dict[str, str]:
    """Per file of a `--unified=0` diff, the lines it adds."""
    added: dict[str, list[str]] = {}
    path, in_hunk = None, False
    for line in diff.split("\n"):
        if line.startswith("diff --git "):
            path, in_hunk = None, False
        elif not in_hunk and line.startswith("+++ "):
            path = _diff_path(line[4:])
        elif line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+") and path is not None:
            added.setdefault(path, []).append(line[1:])
    return {name: "\n".join(lines) for name, lines in added.items()}


def _diff_path(header: str) -> str:
    """`b/path`, or git's C-quoted `"b/p\303\244th"`, as the path."""
    if header.startswith('"') and header.endswith('"'):
        header = codecs.escape_decode(header[1:-1])[0].decode("utf-8", "replace")
    return header[2:] if header.startswith("b/") else header
