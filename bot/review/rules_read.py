"""The repository's rule files, read from the default branch in the bot's mirror (git over its object
store, no work tree: nothing the pull request's head holds is read), for the files of one review.

    found = await read(worktree.mirror, worktree.default_branch, ["api/v1/user.py", "web/app.ts"])
    found.rules, found.skipped      # [Rule] of REVIEW.md / AGENTS.md; Counter of what was not read, by why

Only the folders above a changed file are asked about (`REVIEW.md` and `AGENTS.md` in each), so
no rule of another folder is ever read. The read is an allowlist, bounded: a rule file is a
regular blob (not a symlink, submodule or folder) named exactly `REVIEW.md` or `AGENTS.md`, at
most MAX_FILE_BYTES, UTF-8 text without NUL; at most MAX_RULE_FILES files and MAX_TOTAL_BYTES in
all, from at most MAX_FOLDERS folders. Everything else is skipped and counted.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bot.review.rules import RULE_FILES, Rule, rule_file
from bot.workspace.git import run_git_bytes

log = logging.getLogger("bot.review.rules_read")
MAX_RULE_FILES = 200
MAX_FILE_BYTES = 32 << 10
MAX_TOTAL_BYTES = 1 << 20
MAX_FOLDERS = 1_000
TIMEOUT_S = 30.0
REGULAR = ("100644", "100755")
_KINDS = {"120000": "symlinks", "160000": "submodules", "040000": "folders"}
_CHUNK_PATHS, _CHUNK_BYTES = 200, 64 << 10  # one ls-tree's arguments


@dataclass(frozen=True)
class Entry:
    """One line of `git ls-tree -l`."""

    mode: str
    kind: str
    oid: str
    size: int | None
    path: str


@dataclass
class Found:
    rules: list[Rule] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)


async def read(mirror: Path, branch: str, changed: Iterable[str]) -> Found:
    """The rule files of the default branch's folders above `changed`; never raises: a read that
    fails is counted, and the review goes on without them."""
    found = Found()
    try:
        commit = await _commit(mirror, branch)
        if commit is None:
            found.skipped["rule files not read: the default branch has no commit"] += 1
            return found
        wanted, beyond = folders(changed)
        if beyond:
            found.skipped[f"folders past the first {MAX_FOLDERS:,} not looked at"] += beyond
        entries = await _listed(mirror, commit, [_join(f, name) for f in wanted for name in RULE_FILES])
        admitted, found.skipped = admit(entries, found.skipped)
        for entry, data in zip(admitted, await _blobs(mirror, admitted), strict=True):
            text = _text(data)
            if text is None:
                found.skipped["not UTF-8 text"] += 1
            elif (rule := rule_file(entry.path, text)) is not None:
                found.rules.append(rule)
    except (OSError, ValueError) as exc:
        log.warning("the rule files of %s could not be read: %s", mirror.name, exc)
        found.skipped["rule files not read: git failed"] += 1
    return found


def folders(changed: Iterable[str]) -> tuple[list[str], int]:
    """The folders above the changed files ("" the root), shallowest first, at most MAX_FOLDERS;
    and how many more there were. A name git could not look up literally is left out."""
    seen: set[str] = set()
    for path in changed:
        parts = path.split("/")
        if any(part in ("", ".", "..") for part in parts) or "\0" in path or not _encodable(path):
            continue
        seen.update("/".join(parts[:n]) for n in range(len(parts)))
    ordered = sorted(seen, key=lambda folder: (folder.count("/") + bool(folder), folder))
    return ordered[:MAX_FOLDERS], max(0, len(ordered) - MAX_FOLDERS)


def admit(entries: Iterable[Entry], skipped: Counter[str] | None = None) -> tuple[list[Entry], Counter[str]]:
    """The allowlist: which listed entries are read, shallowest first, within the bounds."""
    skipped = Counter(skipped or {})
    admitted: list[Entry] = []
    total = 0
    for entry in sorted(entries, key=lambda e: (e.path.count("/"), e.path)):
        why = _refusal(entry, len(admitted), total)
        if why:
            skipped[why] += 1
            continue
        admitted.append(entry)
        total += entry.size or 0
    return admitted, skipped


def _refusal(entry: Entry, count: int, total: int) -> str | None:
    if entry.path.rpartition("/")[2] not in RULE_FILES:
        return "not named REVIEW.md or AGENTS.md"
    if entry.mode not in REGULAR or entry.kind != "blob":
        return _KINDS.get(entry.mode, "not regular files")
    if entry.size is None or entry.size > MAX_FILE_BYTES:
        return f"larger than {MAX_FILE_BYTES >> 10} KiB"
    if count >= MAX_RULE_FILES:
        return f"past the first {MAX_RULE_FILES} rule files"
    if total + entry.size > MAX_TOTAL_BYTES:
        return f"past {MAX_TOTAL_BYTES >> 20} MiB of rule files"
    return None


def _encodable(path: str) -> bool:
    try:
        path.encode()
    except UnicodeEncodeError:  # a lone surrogate from JSON: no file git holds has that name
        return False
    return True


def _text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else text


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


async def _git(mirror: Path, *args: str, stdin: bytes | None = None) -> bytes:
    code, out, err = await run_git_bytes("--literal-pathspecs", *args, cwd=mirror, stdin=stdin,
                                         env={"GIT_DIR": str(mirror)}, timeout_s=TIMEOUT_S)
    if code != 0:
        raise ValueError(f"git {args[0]} failed ({code}): {err.strip()[:200]}")
    return out


async def _commit(mirror: Path, branch: str) -> str | None:
    code, out, _ = await run_git_bytes("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}",
                                       cwd=mirror, env={"GIT_DIR": str(mirror)}, timeout_s=TIMEOUT_S)
    return out.decode().strip() if code == 0 and out.strip() else None


async def _listed(mirror: Path, commit: str, paths: list[str]) -> list[Entry]:
    entries: list[Entry] = []
    for chunk in _chunks(paths):
        out = await _git(mirror, "ls-tree", "-l", "-z", commit, "--", *chunk)
        asked = set(chunk)  # a folder named REVIEW.md that holds an asked path is listed by its files: not asked
        entries += [entry for line in out.split(b"\0") if line and (entry := _entry(line)) is not None
                    and entry.path in asked]
    return entries


def _chunks(paths: list[str]) -> Iterable[list[str]]:
    chunk: list[str] = []
    size = 0
    for path in paths:
        if chunk and (len(chunk) >= _CHUNK_PATHS or size + len(path.encode()) > _CHUNK_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(path)
        size += len(path.encode())
    if chunk:
        yield chunk


def _entry(line: bytes) -> Entry | None:
    meta, _, path = line.partition(b"\t")
    fields = meta.decode("ascii", "replace").split()
    if len(fields) != 4:
        return None
    mode, kind, oid, size = fields
    return Entry(mode, kind, oid, int(size) if size.isdigit() else None, path.decode("utf-8", "replace"))


async def _blobs(mirror: Path, entries: list[Entry]) -> list[bytes]:
    """Each admitted blob's bytes (their sizes, and so the output, are bounded by `admit`)."""
    if not entries:
        return []
    out = await _git(mirror, "cat-file", "--batch", stdin="".join(f"{e.oid}\n" for e in entries).encode())
    blobs, at = [], 0
    for _ in entries:
        header_end = out.index(b"\n", at)
        header = out[at:header_end].split()
        if len(header) != 3 or not header[2].isdigit():
            raise ValueError(f"git cat-file answered {header!r}")
        size = int(header[2])
        blobs.append(out[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1
    return blobs
