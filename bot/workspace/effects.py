"""The bot's own effects after an episode (DESIGN §5): commit, push, open the pull request.

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
"""
from __future__ import annotations

import codecs
import logging
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import gidgethub
import httpx
from gidgethub.abc import GitHubAPI

from bot import config
from bot.record import leaks
from bot.record.redact import running_secrets
from bot.workspace import paths, tree_scan
from bot.workspace.git import git, git_bytes, pinned_env, redact, run_git
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


async def apply(worktree: Worktree, request: Request, api: GitHubAPI, token: str | None = None) -> Outcome:
    """Turn the worktree's changes into a commit and put it where the request belongs."""
    planted = await _planted_repositories(worktree)
    if planted:
        return planted
    changed = await _changed_paths(worktree)
    oversized = _oversized(worktree, changed)
    if oversized:
        listed = ", ".join(f"`{path}` ({size >> 20} MiB)" for path, size in oversized[:10])
        return Outcome("refused", f"I did not commit anything: the change adds files larger than "
                       f"{MAX_FILE_BYTES >> 20} MiB ({listed}); GitHub refuses or warns on files that "
                       "large, and the bot never commits them.", worktree.base_sha,
                       files=[path for path, _ in oversized])
    files = await _stage(worktree, changed)
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
    shortstat = (await _git(worktree, "diff", "--shortstat", "--no-ext-diff", "--no-textconv",
                            worktree.base_sha, sha)).strip()
    done = Outcome("pushed", "", worktree.base_sha, sha, shortstat, files)
    return await _deliver(worktree, request, api, token, done)


async def _deliver(wt: Worktree, request: Request, api: GitHubAPI, token: str | None, done: Outcome) -> Outcome:
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


async def _push_and_open(wt: Worktree, request: Request, api: GitHubAPI, token: str | None, done: Outcome,
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
    done.message = f"Pushed {cast(str, done.commit_sha)[:7]} to {done.branch_link()} ({done.diffstat})."
    return done


async def _push_once(wt: Worktree, token: str | None, url: str, branch: str) -> tuple[int, str, str]:
    return await run_git("push", "--porcelain", "--no-verify", "--no-recurse-submodules", url,
                         f"HEAD:refs/heads/{branch}", cwd=wt.admin_dir, token=token, env=wt.repo_env())


async def _rebase_on_remote(wt: Worktree, token: str | None, url: str, branch: str) -> str | None:
    """Fetch the branch's new tip and replay our commit on it; None on success, else why not."""
    tracking = "refs/worktree/bot-remote"
    async with mirror_lock(wt.mirror):  # the object store is shared with concurrent jobs
        code, _, err = await run_git("fetch", "--quiet", "--no-write-fetch-head", "--no-recurse-submodules",
                                     url, f"+refs/heads/{branch}:{tracking}", cwd=wt.admin_dir, token=token,
                                     env=wt.repo_env())
    if code != 0:
        return f"fetching it failed ({_last_line(redact(err, token))})"
    # the one step that needs the tree (a checkout); it passed the scan, and no hook, editor or
    # submodule recursion is left to the configuration
    code, _, err = await run_git("rebase", "--quiet", "--no-verify", "--no-autostash", "--onto", tracking,
                                 wt.base_sha, cwd=wt.path, env=wt.git_env())
    if code != 0:
        await run_git("rebase", "--abort", cwd=wt.path, env=wt.git_env())
        return "conflict"
    return None


async def _open_pull(api: GitHubAPI, wt: Worktree, request: Request, done: Outcome, branch: str,
                     base: str) -> dict:
    owner = cast(str, done.repo).split("/")[0]
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


async def _stage(wt: Worktree, changed: list[bytes]) -> list[str]:
    """Make the index the base tree plus every changed path as the bot finds it: a regular file
    hashed with --no-filters, a symlink as its target, anything missing (or behind a symlinked
    folder) removed. Submodule pointers stay as they were; nothing inside them is taken."""
    submodules = await wt.submodules()
    records = await _index_records(wt, [name for name in changed if not _in_submodule(name, submodules)])
    code, _, _ = await run_git("diff-index", "--cached", "--quiet", wt.base_sha, cwd=wt.admin_dir,
                               env=wt.repo_env())
    if code != 0:  # the index is the base's since the checkout (and keeps its stat data); else reset
        await _git(wt, "read-tree", wt.base_sha)
    if records:
        await git_bytes("update-index", "-z", "--index-info", cwd=wt.admin_dir, env=wt.repo_env(),
                        stdin=b"".join(records))
    names = await _git(wt, "diff-index", "--cached", "--name-only", "--no-renames", "-z", wt.base_sha)
    return [name for name in names.split("\0") if name]


async def _changed_paths(wt: Worktree) -> list[bytes]:
    """Untracked files that are not ignored, and tracked paths whose file differs from the
    index by its stat data (contents are compared when hashed). git is pinned to the bot's git
    dir; the scan has made sure there is no repository in the tree for it to enter."""
    env = pinned_env(wt.git_dir, wt.path)
    untracked = await git_bytes("ls-files", "-z", "--others", "--exclude-standard", cwd=wt.path, env=env)
    tracked = await git_bytes("diff-files", "-z", "--name-only", "--no-renames", "--ignore-submodules=all",
                              cwd=wt.path, env=env)
    return list(dict.fromkeys(name for name in (untracked + tracked).split(b"\0") if name))


def _in_submodule(name: bytes, submodules: set[str]) -> bool:
    text = os.fsdecode(name)
    return any(text == path or text.startswith(path + "/") for path in submodules)


async def _index_records(wt: Worktree, changed: list[bytes]) -> list[bytes]:
    """`update-index --index-info` records: `mode sha<TAB>path` to set, mode 0 to remove."""
    files, links, gone = [], [], []
    for name in changed:
        info = _lstat_below(wt.path, name)
        if info is None or stat.S_ISDIR(info.st_mode):
            gone.append(name)
        elif stat.S_ISREG(info.st_mode):
            files.append((b"100755" if info.st_mode & stat.S_IXUSR else b"100644", name))
        elif stat.S_ISLNK(info.st_mode):
            links.append(name)
        # a fifo, socket or device is no file git can hold: the base version stays
    records = [b"0 " + b"0" * 40 + b"\t" + name + b"\0" for name in gone]
    root = os.fsencode(wt.path)
    if files:
        listing = b"".join(_c_quoted(root + b"/" + name) + b"\n" for _, name in files)
        shas = (await git_bytes("hash-object", "-w", "--no-filters", "--stdin-paths", cwd=wt.admin_dir,
                                env=wt.repo_env(), stdin=listing)).split()
        records += [mode + b" " + sha + b"\t" + name + b"\0" for (mode, name), sha in zip(files, shas, strict=True)]
    for name in links:
        target = os.readlink(root + b"/" + name)
        sha = (await git_bytes("hash-object", "-w", "--stdin", cwd=wt.admin_dir, env=wt.repo_env(),
                               stdin=target)).strip()
        records.append(b"120000 " + sha + b"\t" + name + b"\0")
    return records


def _lstat_below(root: Path, name: bytes) -> os.stat_result | None:
    """lstat of root/name; None when it is missing or a folder on the way is not a real folder
    (a symlinked folder is never followed: its files are not the tree's)."""
    here = os.fsencode(root)
    for part in name.split(b"/"):
        try:
            info = os.lstat(here)
        except OSError:
            return None
        if not stat.S_ISDIR(info.st_mode):
            return None
        here += b"/" + part
    try:
        return os.lstat(here)
    except OSError:
        return None


def _c_quoted(path: bytes) -> bytes:
    """A path in git's C-style quotes, as `--stdin-paths` reads a line that starts with `"`."""
    escaped = bytearray(b'"')
    for byte in path:
        if byte in (0x22, 0x5C):
            escaped += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            escaped += b"\\%03o" % byte
        else:
            escaped.append(byte)
    return bytes(escaped + b'"')


async def _nested_repositories(wt: Worktree, files: list[str]) -> list[str]:
    """Folders the new tree would hand to anyone who checks it out as a bare repository (HEAD,
    objects/, refs/ as plain files, config naming programs), holding a changed path."""
    tree = await _git(wt, "ls-files", "-z")
    return tree_scan.bare_repositories(tree.split("\0"), files)


def _oversized(wt: Worktree, changed: list[bytes]) -> list[tuple[str, int]]:
    """Changed files larger than MAX_FILE_BYTES, checked before anything is hashed into the
    shared object store."""
    found = []
    for name in changed:
        info = _lstat_below(wt.path, name)
        if info is not None and stat.S_ISREG(info.st_mode) and info.st_size > MAX_FILE_BYTES:
            found.append((os.fsdecode(name), info.st_size))
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
    """The index as a commit on the base, and HEAD moved to it: plumbing only (`git commit`
    would run hooks and a status over the tree)."""
    tree = (await _git(wt, "write-tree")).strip()
    message = _commit_message(wt, request).encode()
    sha = (await _git(wt, "commit-tree", tree, "-p", wt.base_sha, "-F", "-", stdin=message)).strip()
    await _git(wt, "update-ref", "-m", "bot: commit", "HEAD", sha)
    return sha


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
    diff = await _git(wt, "diff", "--no-color", "--no-ext-diff", "--no-textconv", f"{done.commit_sha}^",
                      cast(str, done.commit_sha))
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n… (diff truncated)\n"
        message += f" The diff is longer than {MAX_DIFF_CHARS} characters and was truncated."
    done.kind, done.message, done.diff = kind, message, diff
    return done


async def _git(wt: Worktree, *args: str, stdin: bytes | None = None) -> str:
    """git on the bot's git dir alone: no work tree, so nothing in the tree is read."""
    return await git(*args, cwd=wt.admin_dir, env=wt.repo_env(), stdin=stdin)


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
        header = codecs.escape_decode(header[1:-1])[0].decode("utf-8", "replace")
    return header[2:] if header.startswith("b/") else header
