"""The bot's own effects after an episode (DESIGN §5): commit, push, open the pull request.

The agent never commits or pushes. After the episode the bot stages what changed in the job's
worktree, refuses protected paths, commits as itself with `Co-authored-by:` the requester, and:

- from an issue: pushes `bot/<agent>/<issue>-<slug>` and opens a PR that links the issue;
- from a same-repository PR: pushes to its head branch (or, with `open_pull_requests`, opens a
  PR against that head);
- from a fork PR: pushes to the fork only if its author allowed maintainers to modify it AND the
  repository allows it (`allow_fork_push`); otherwise the change comes back as a diff to post.

A push rejected because the branch moved is fetched, rebased on top once and retried.
"""
from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import dataclass, field

import gidgethub
import httpx

from bot import config
from bot.bridge import paths
from bot.record import leaks
from bot.workspace.git import git, redact, run_git
from bot.workspace.worktrees import Worktree, mirror_lock

log = logging.getLogger(__name__)

MAX_DIFF_CHARS = 60_000
MAX_FILE_BYTES = 50 << 20  # GitHub warns above 50 MiB and refuses above 100 MiB
_REJECTED = re.compile(r"Updates were rejected|\[rejected\]|non-fast-forward|fetch first|stale info")


@dataclass
class Request:
    """Who asked for what, where. `pull` is the PR object (GET /pulls/N) when the thread is a PR."""

    agent: str
    text: str
    requester_login: str
    requester_id: int | None
    number: int
    title: str = ""
    pull: dict | None = None


@dataclass
class Outcome:
    kind: str  # none | refused | pushed | pull_request | diff | conflict | failed
    message: str  # one or two sentences for the answer
    base_sha: str
    commit_sha: str | None = None
    diffstat: str = ""  # "3 files changed, 10 insertions(+), 2 deletions(-)"
    files: list[str] = field(default_factory=list)
    repo: str | None = None  # where the branch was pushed (owner/repo)
    branch: str | None = None
    pr_number: int | None = None
    pr_url: str | None = None
    diff: str | None = None  # for `diff`, `conflict` and `failed`: the change to post instead

    def summary(self) -> str:
        """One provenance line: base → commit · diffstat · where it went."""
        parts = [f"base {self.base_sha[:7]}" + (f" → {self.commit_sha[:7]}" if self.commit_sha else "")]
        if self.diffstat:
            parts.append(self.diffstat)
        if self.pr_number:
            parts.append(f"[PR #{self.pr_number}]({self.pr_url})" if self.pr_url else f"PR #{self.pr_number}")
        elif self.kind == "pushed":
            parts.append(self.branch_link())
        return " · ".join(parts)

    def branch_link(self) -> str:
        """Markdown for the branch, linked when the git host is a web host (github.com, GHES)."""
        label = f"`{self.branch}`" + (f" on {self.repo}" if self.repo else "")
        base = config.git_base_url()
        if not self.branch or not self.repo or not base.startswith(("https://", "http://")):
            return label
        return f"[{label}]({base}/{self.repo}/tree/{self.branch})"


def _never_committed(worktree: Worktree, what: str, paths: list[str], files: list[str]) -> Outcome:
    listed = ", ".join(f"`{p}`" for p in paths[:10])
    return Outcome("refused", f"I did not commit anything: the change adds {what} ({listed}), which "
                   "the bot never commits.", worktree.base_sha, files=files)


async def apply(worktree: Worktree, request: Request, api, token: str | None = None) -> Outcome:
    """Turn the worktree's changes into a commit and put it where the request belongs."""
    oversized = await _oversized(worktree)
    if oversized:
        listed = ", ".join(f"`{path}` ({size >> 20} MiB)" for path, size in oversized[:10])
        return Outcome("refused", f"I did not commit anything: the change adds files larger than "
                       f"{MAX_FILE_BYTES >> 20} MiB ({listed}); GitHub refuses or warns on files that "
                       "large, and the bot never commits them.", worktree.base_sha,
                       files=[path for path, _ in oversized])
    files = await _stage(worktree)
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
    nested = await _nested_repositories(worktree, files)
    if nested:
        return _never_committed(worktree, "nested git repositories", nested, files)
    links = await _symlinks(worktree, files)
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
    shortstat = (await _git(worktree, "diff", "--shortstat", worktree.base_sha, sha)).strip()
    done = Outcome("pushed", "", worktree.base_sha, sha, shortstat, files)
    return await _deliver(worktree, request, api, token, done)


async def _deliver(wt: Worktree, request: Request, api, token: str | None, done: Outcome) -> Outcome:
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
        return await _push(wt, token, done, wt.full_name, head_ref)
    if head_name and pull.get("maintainer_can_modify") and cfg.allow_fork_push:
        return await _push(wt, token, done, head_name, head_ref)
    why = ("the fork is gone" if not head_name else
           "the author did not allow edits by maintainers" if not pull.get("maintainer_can_modify")
           else "this repository's .github/bot.yml does not set allow_fork_push")
    return await _with_diff(wt, done, "diff", f"This pull request comes from a fork and {why}, "
                            "so here is the change as a diff to apply.")


async def _push_and_open(wt: Worktree, request: Request, api, token, done: Outcome,
                         repo: str, branch: str, base: str) -> Outcome:
    pushed = await _push(wt, token, done, repo, branch)
    if pushed.kind != "pushed":
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


async def _push(wt: Worktree, token: str | None, done: Outcome, repo: str, branch: str) -> Outcome:
    """Push HEAD to repo's branch; if the branch moved, rebase on it once and push again."""
    done.repo, done.branch = repo, branch
    url = config.clone_url(repo)
    code, out, err = await _push_once(wt, token, url, branch)
    if code != 0 and _REJECTED.search(out + err):
        problem = await _rebase_on_remote(wt, token, url, branch)
        if problem == "conflict":
            return await _with_diff(wt, done, "conflict", f"`{branch}` on {repo} moved while I worked and "
                                    "my change conflicts with the new commits; here it is as a diff.")
        if problem:
            return await _with_diff(wt, done, "failed", f"`{branch}` on {repo} moved while I worked and "
                                    f"{problem}; here is the change as a diff.")
        done.commit_sha = (await _git(wt, "rev-parse", "HEAD")).strip()
        code, out, err = await _push_once(wt, token, url, branch)
    if code != 0:
        log.warning("push to %s %s failed: %s", repo, branch, redact(err, token))
        reason = _push_refusal(out) or _last_line(redact(err, token))
        return await _with_diff(wt, done, "failed", f"Pushing to `{branch}` on {repo} failed: "
                                f"{reason}. Here is the change as a diff.")
    done.kind = "pushed"
    done.message = f"Pushed {done.commit_sha[:7]} to {done.branch_link()} ({done.diffstat})."
    return done


async def _push_once(wt: Worktree, token: str | None, url: str, branch: str) -> tuple[int, str, str]:
    return await run_git("push", "--porcelain", "--no-verify", url, f"HEAD:refs/heads/{branch}",
                         cwd=wt.path, token=token, env=wt.git_env())


async def _rebase_on_remote(wt: Worktree, token: str | None, url: str, branch: str) -> str | None:
    """Fetch the branch's new tip and replay our commit on it; None on success, else why not."""
    tracking = "refs/worktree/bot-remote"
    async with mirror_lock(wt.mirror):  # the object store is shared with concurrent jobs
        code, _, err = await run_git("fetch", "--quiet", "--no-write-fetch-head", url,
                                     f"+refs/heads/{branch}:{tracking}", cwd=wt.path, token=token,
                                     env=wt.git_env())
    if code != 0:
        return f"fetching it failed ({_last_line(redact(err, token))})"
    code, _, err = await run_git("rebase", "--quiet", "--onto", tracking, wt.base_sha,
                                 cwd=wt.path, env=wt.git_env())
    if code != 0:
        await run_git("rebase", "--abort", cwd=wt.path, env=wt.git_env())
        return "conflict"
    return None


async def _open_pull(api, wt: Worktree, request: Request, done: Outcome, branch: str, base: str) -> dict:
    owner = done.repo.split("/")[0]
    data = {"title": _title(request), "head": branch, "base": base,
            "body": _pull_body(wt, request, done), "maintainer_can_modify": True}
    try:
        return await api.post(f"/repos/{done.repo}/pulls", data=data)
    except gidgethub.BadRequest as exc:
        if "already exists" not in _api_error(exc):
            raise
    existing = await api.getitem(f"/repos/{done.repo}/pulls?head={owner}:{branch}&state=open")
    if not existing:
        raise gidgethub.GitHubException("a pull request exists for the branch but could not be found")
    return existing[0]


def _pull_body(wt: Worktree, request: Request, done: Outcome) -> str:
    if request.pull is None:
        link = f"{'Fixes' if wt.config.close_issue else 'Refs'} #{request.number}"
    else:
        link = f"For #{request.number}"
    return (f"{link}\n\nRequested by @{request.requester_login}:\n\n> "
            + "\n> ".join(request.text.strip().splitlines() or [""])
            + f"\n\nMade by {request.agent} · base {done.base_sha[:7]} · {done.diffstat}\n")


async def _stage(wt: Worktree) -> list[str]:
    await _git(wt, "add", "--all", "--", ".")
    names = await _git(wt, "diff", "--cached", "--name-only", "--no-renames", "-z", wt.base_sha)
    return [name for name in names.split("\0") if name]


async def _nested_repositories(wt: Worktree, files: list[str]) -> list[str]:
    """Changed paths staged as gitlinks (mode 160000): a repository the agent made inside."""
    staged = await _git(wt, "ls-files", "--stage", "-z", "--", *files)
    entries = (entry.split("\t", 1) for entry in staged.split("\0") if "\t" in entry)
    return [path for meta, path in entries if meta.startswith("160000 ")]


async def _oversized(wt: Worktree) -> list[tuple[str, int]]:
    """Files `git add --all` would take that are larger than MAX_FILE_BYTES, checked before
    anything is hashed into the shared object store."""
    names = await _git(wt, "ls-files", "-z", "--others", "--modified", "--exclude-standard")
    found = []
    for name in dict.fromkeys(n for n in names.split("\0") if n):
        try:
            info = os.lstat(wt.path / name)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            found.append((name, info.st_size))
    return found


async def _symlinks(wt: Worktree, files: list[str]) -> dict[str, str]:
    """Changed paths staged as symlinks (mode 120000), with their targets."""
    staged = await _git(wt, "ls-files", "--stage", "-z", "--", *files)
    entries = (entry.split("\t", 1) for entry in staged.split("\0") if "\t" in entry)
    return {path: await _git(wt, "cat-file", "blob", meta.split()[1])
            for meta, path in entries if meta.startswith("120000 ")}


async def _escaping_symlinks(wt: Worktree, links: dict[str, str]) -> list[str]:
    """Symlinks whose target is absolute, climbs out of the repository or reaches into a `.git`
    dir in any spelling a case-insensitive, NTFS or HFS+ checkout follows (`.GIT`, `.git.`,
    `GIT~1`, `..\\x`; bot/bridge/paths.py): a checkout (a CI job) would follow them to host files
    or to the clone's credentials."""
    return [path for path, target in links.items() if paths.link_escapes(path, target)]


async def _commit(wt: Worktree, request: Request) -> str:
    message = _commit_message(wt, request).encode()
    await git("commit", "--quiet", "--no-verify", "--file=-", cwd=wt.path, stdin=message, env=wt.git_env())
    return (await _git(wt, "rev-parse", "HEAD")).strip()


def _commit_message(wt: Worktree, request: Request) -> str:
    login, uid = request.requester_login, request.requester_id
    # GitHub attributes <id>+<login>@users.noreply.github.com; without an id, the older form
    noreply = f"{uid}+{login}@users.noreply.github.com" if uid else f"{login}@users.noreply.github.com"
    asked = " ".join(request.text.split())
    return (f"{_title(request)}\n\nRequested by @{login} in {wt.full_name}#{request.number} "
            f"({request.agent}): {asked[:500]}\n\n"
            f"Co-authored-by: {login} <{noreply}>\n")


def _title(request: Request) -> str:
    """The request's first line; a terse one ("fix this") gets the thread's title after it."""
    first = next((line.strip() for line in request.text.splitlines() if line.strip()), "")
    if len(first.split()) < 4 and request.title:
        first = f"{first.rstrip('.!')}: {request.title}" if first else request.title
    first = first or f"Changes requested by @{request.requester_login}"
    first = first[0].upper() + first[1:]
    return first if len(first) <= 72 else first[:71].rstrip() + "…"


def _branch_name(request: Request, prefix: str) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", (request.title or request.text).lower()).strip("-")
    slug = words[:40].rstrip("-") or "change"
    return f"bot/{request.agent}/{prefix}-{slug}"


def _refusal(wt: Worktree, refused: list[tuple[str, str]], files: list[str]) -> Outcome:
    listed = ", ".join(f"`{path}` (matches `{pattern}`)" for path, pattern in refused[:10])
    more = f" and {len(refused) - 10} more" if len(refused) > 10 else ""
    message = (f"I did not commit anything: the change touches protected paths: {listed}{more}. "
               f"They are protected by {wt.config.source}; a maintainer can change "
               "`protected_paths` on the default branch, or make this change by hand.")
    return Outcome("refused", message, wt.base_sha, files=files)


async def _with_diff(wt: Worktree, done: Outcome, kind: str, message: str) -> Outcome:
    # the bot makes exactly one commit, so its parent..itself is the change even after a rebase
    diff = await _git(wt, "diff", "--no-color", "--no-ext-diff", f"{done.commit_sha}^", done.commit_sha)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n… (diff truncated)\n"
        message += f" The diff is longer than {MAX_DIFF_CHARS} characters and was truncated."
    done.kind, done.message, done.diff = kind, message, diff
    return done


async def _git(wt: Worktree, *args: str) -> str:
    return await git(*args, cwd=wt.path, env=wt.git_env())


def _api_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None) or []
    details = [e.get("message", "") for e in errors if isinstance(e, dict)]
    return "; ".join([str(exc), *details]).strip("; ")


def _push_refusal(porcelain: str) -> str:
    """The reason on a `git push --porcelain` line for a refused ref (`!<TAB>ref<TAB>reason`)."""
    refused = [line.split("\t")[-1] for line in porcelain.splitlines() if line.startswith("!")]
    return refused[0] if refused else ""


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no message from git"


async def _secrets_leaving(wt: Worktree, request: Request, files: list[str], token: str | None) -> list:
    """The gate before anything leaves (issue 9, class 6): what the commit, the push, the branch
    and the pull request would publish, scanned (bot.record.leaks) for the secrets of the jobs
    running now and for token shapes: the file names, the added lines (binary files as text),
    the branch name, the pull request's title and the commit message (which carries the request
    that the pull request's body quotes)."""
    from bot.record.redact import running_secrets
    secrets = [*running_secrets(), *([token] if token else [])]
    diff = await _git(wt, "diff", "--cached", "--text", "--no-color", "--no-ext-diff", "--no-textconv",
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
        import codecs
        header = codecs.escape_decode(header[1:-1])[0].decode("utf-8", "replace")
    return header[2:] if header.startswith("b/") else header
