"""Looking at an agent-written tree before the bot's git runs over it (bot/workspace/git.py).

git treats a folder holding `.git` as a repository and reads its config (to resolve its HEAD)
even under `--ignore-submodules=all`; a submodule path is entered by `status`, `add`, `clean`
and `worktree remove`. So the tree is walked here first, in Python, without following a link
and without opening a file: a `.git` below the top in any spelling a checkout would follow
(bot/bridge/paths.py) is a repository the agent planted, and the caller stops before any git
sees it. A submodule path (a gitlink of the commit) that is not an empty folder is reported too:
git never looks inside it, so what is there would neither be committed nor cleaned. So are
special files (FIFOs, sockets, devices): git cannot hold them, and one where git reads a file of
the tree (`.gitignore`) would block the bot's git for ever. The walk looks `MAX_DEPTH` levels
down and no further: a folder there that holds anything is reported as too deep (its tree is
not looked at, so the caller cannot call it clean).

`bare_repositories` is the same question for what the bot is about to push: a folder holding
HEAD, objects/ and refs/ is a git dir to anyone who checks out the branch and enters it.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.workspace import paths
from bot.workspace.git import git_bytes, pinned_env
from sandbox.bounded_tree import MAX_DEPTH


@dataclass
class Findings:
    # folders holding `.git`; for other spellings of it (`.GIT`, `GIT~1`), some files inside
    repositories: list[str] = field(default_factory=list)
    in_submodules: list[str] = field(default_factory=list)  # submodule paths that are not empty
    unreadable: list[str] = field(default_factory=list)  # folders the walk could not list
    special: list[str] = field(default_factory=list)  # fifos, sockets, devices
    too_deep: list[str] = field(default_factory=list)  # folders MAX_DEPTH down that hold something

    @property
    def clean(self) -> bool:
        return not (self.repositories or self.in_submodules or self.unreadable or self.special
                    or self.too_deep)


def scan(root: Path, submodules: Iterable[str] = ()) -> Findings:
    """Walk `root` (links never followed, nothing opened). The top's own `.git` is the bot's
    pointer and is skipped: the bot's git never reads it (GIT_DIR is explicit)."""
    found, gitlinks, pending = Findings(), set(submodules), [""]
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(root / folder if folder else root))
        except OSError:
            found.unreadable.append(folder or ".")
            continue
        for entry in entries:
            path = f"{folder}/{entry.name}" if folder else entry.name
            if path == ".git":
                continue
            if entry.name == ".git":
                found.repositories.append(folder)  # a repository: named by its folder
                continue
            if paths.is_git_name(paths.canonical_component(entry.name)):
                found.repositories += _some_files(root, path, entry.is_dir(follow_symlinks=False))
                continue
            is_dir = entry.is_dir(follow_symlinks=False)
            if not (is_dir or entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                found.special.append(path)  # a FIFO named .gitignore blocks git's walk for ever
            if path in gitlinks and (not is_dir or _has_entries(entry.path)):
                found.in_submodules.append(path)
            if is_dir and path.count("/") + 1 < MAX_DEPTH:
                pending.append(path)
            elif is_dir and _has_entries(entry.path):
                found.too_deep.append(path)
    found.repositories.sort()
    return found


def _some_files(root: Path, path: str, is_dir: bool, limit: int = 10) -> list[str]:
    """A few files of a `.git` folder (to name in a refusal), or the entry itself."""
    found: list[str] = []
    pending = [path] if is_dir else []
    while pending and len(found) < limit:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(root / folder), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            (pending if entry.is_dir(follow_symlinks=False) else found).append(f"{folder}/{entry.name}")
    return found[:limit] or [path]


def _has_entries(folder: str) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except OSError:
        return True


async def submodule_paths(git_dir: Path, rev: str) -> set[str]:
    """The gitlinks (submodule pointers) of `rev`, read from the bot's object store."""
    listing = await git_bytes("ls-tree", "-r", "-z", "--full-tree", rev, cwd=git_dir, env=pinned_env(git_dir))
    entries = (entry.split(b"\t", 1) for entry in listing.split(b"\0") if b"\t" in entry)
    return {os.fsdecode(path) for meta, path in entries if meta.startswith(b"160000 ")}


def bare_repositories(tree: Iterable[str], changed: Iterable[str]) -> list[str]:
    """Folders of `tree` (every path of the commit) that hold HEAD and something under objects/
    and refs/, as git's own test for a git dir asks (in any case: a checkout may fold it), and
    a path of `changed`."""
    heads: set[str] = set()
    objects: set[str] = set()
    refs: set[str] = set()
    spelled: dict[str, str] = {}
    for path in tree:
        parts = path.split("/")
        folded = [part.casefold() for part in parts]
        for depth in range(1, len(parts)):
            spelled.setdefault("/".join(folded[:depth]), "/".join(parts[:depth]))
        if len(parts) > 1 and folded[-1] == "head":
            heads.add("/".join(folded[:-1]))
        for depth in range(1, len(parts) - 1):
            if folded[depth] in ("objects", "refs"):
                (objects if folded[depth] == "objects" else refs).add("/".join(folded[:depth]))
    gitdirs = heads & objects & refs
    hit = {folder for path in changed for folder in gitdirs if path.casefold().startswith(folder + "/")}
    return sorted(spelled[folder] for folder in hit)
