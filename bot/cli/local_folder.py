"""Which state the folder `bot run --repo` names is in, asked of git before anything runs.

A working tree with a commit runs, whatever else it is (a detached HEAD, a linked worktree, a
submodule), and `base` says what it starts from. Every other state (no repository, no commit yet,
a bare repository, a repository's own git folder) is refused with one line that says what to do;
following that line's advice never leads into another refusal's crash.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.errors import BotError
from bot.workspace.git import git_env
from sandbox.bounded import run_capped_sync

ANSWER_CAP = 64 << 10  # git's answers here are a path, a name or a commit id; more is a failure
FIRST_COMMIT = "`git add -A && git commit -m \"first commit\"`"


class RunRefused(BotError):
    """`bot run` cannot start; the message is the one line that says why and what to do."""


@dataclass(frozen=True)
class Checkout:
    top: Path  # the top of the working tree
    base: str  # what the run starts from, for the terminal: "branch main at 1a2b3c4"


def _git(folder: Path, *args: str) -> str | None:
    """git's output in `folder` without anyone's config or programs, or None when it failed."""
    done = run_capped_sync(["git", "-C", str(folder), *args], cap=ANSWER_CAP, env=git_env())
    return done.stdout.decode("utf-8", "replace").strip() if done.ok else None


def checkout(path: str) -> Checkout:
    """The checkout holding `path` (a subfolder means its repository), or RunRefused."""
    folder = Path(path).expanduser()
    if not folder.exists():
        raise RunRefused(f"--repo {path}: no such folder")
    if not folder.is_dir():
        raise RunRefused(f"--repo {path}: not a folder")
    shown = folder.resolve()
    bare = _git(folder, "rev-parse", "--is-bare-repository")
    if bare is None:
        raise RunRefused(f"{shown} is not inside a git repository: make it one with `git init` and then "
                         f"{FIRST_COMMIT}, or pass --repo with a repository's folder")
    if bare == "true":
        raise RunRefused(f"{shown} is a bare repository (it has no working tree for the agent): "
                         f"clone it with `git clone {shown}` and run in the clone")
    top = _git(folder, "rev-parse", "--show-toplevel")
    if not top:
        raise RunRefused(f"{shown} is inside a repository's git folder, not its working tree: "
                         "pass --repo with the repository's own folder")
    sha = _git(folder, "rev-parse", "--verify", "-q", "--short=7", "HEAD^{commit}")
    if not sha:
        raise RunRefused(f"{Path(top)} has no commit yet: the agent starts from a commit, so make the "
                         f"first one there with {FIRST_COMMIT}")
    return Checkout(Path(top).resolve(), _base(Path(top), sha))


def _base(top: Path, sha: str) -> str:
    branch = _git(top, "symbolic-ref", "-q", "--short", "HEAD")
    at = f"branch {branch} at {sha}" if branch else f"detached HEAD at {sha}"
    outer = _git(top, "rev-parse", "--show-superproject-working-tree")
    if outer:
        return f"{at} (the submodule {top.resolve().relative_to(Path(outer).resolve())} of {Path(outer)})"
    own = _git(top, "rev-parse", "--path-format=absolute", "--git-dir")
    common = _git(top, "rev-parse", "--path-format=absolute", "--git-common-dir")
    if own and common and Path(own).resolve() != Path(common).resolve():
        main = Path(common).parent if Path(common).name == ".git" else Path(common)
        return f"{at} (a linked worktree of {main})"
    return at
