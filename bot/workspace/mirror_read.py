"""What a job needs of its mirror, asked of one git: the commits its refs name and the
repository's configuration file, with `git cat-file --batch-command` (git 2.36+).

A git costs a few milliseconds to start, more than the lookups themselves; a job asked five of
them (does HEAD resolve, the default branch's commit, the configuration file, the job's commit)
before its worktree was made. The mirror is the bot's own (bare, fetched by explicit URL, never
mounted writable in a sandbox), and `cat-file` only reads objects: no filter, textconv or
program of the repository is involved. The one object read whole is read up to `max_bytes`:
a larger one is reported by its size and its contents are not kept (git is stopped there).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.workspace.git import GitError, git_head

# a header line of cat-file: "<oid> <type> <size>" or "<name> missing"; the names asked are
# refs and paths the bot chose, so this bounds every line of the answer
_LINE_MAX = 4096


@dataclass(frozen=True)
class Found:
    oid: str
    kind: str  # commit, tree, blob (or tag)
    size: int


@dataclass(frozen=True)
class Answers:
    found: dict[str, Found | None]  # per name asked: what it names, None when nothing
    contents: bytes | None  # the object asked whole, when it is there and fits


async def ask(mirror: Path, names: Sequence[str], whole: str | None = None, max_bytes: int = 0) -> Answers:
    """Look up `names` (each a revision git understands, `ref^{commit}` or `rev:path`) and read
    `whole` (one of them) whole when it is at most `max_bytes`."""
    for name in names:
        if not name or any(char in name for char in "\n\r\0"):
            raise ValueError(f"not a revision to ask cat-file for: {name!r}")
    if whole is not None and whole not in names:
        raise ValueError("the object read whole must be one of the names asked")
    commands = [f"info {name}\n" for name in names] + ([f"contents {whole}\n"] if whole else [])
    cap = len(names) * _LINE_MAX + (_LINE_MAX + max_bytes + 1 if whole else 0)
    out = await git_head("cat-file", "--batch-command", cap=cap, cwd=mirror, stdin="".join(commands).encode())
    return _parse(out.stdout, names, whole, max_bytes)


def _parse(out: bytes, names: Sequence[str], whole: str | None, max_bytes: int) -> Answers:
    found: dict[str, Found | None] = {}
    rest = out
    for name in names:
        line, newline, rest = rest.partition(b"\n")
        if not newline:
            raise _odd("fewer lines than it was asked")
        found[name] = _header(line, name)
    target = found[whole] if whole is not None else None
    if whole is None or target is None or target.size > max_bytes:
        return Answers(found, None)
    header, _, body = rest.partition(b"\n")
    if _header(header, whole) != target or len(body) < target.size:
        raise _odd("contents that do not match what it had found")
    return Answers(found, body[:target.size])


def _header(line: bytes, name: str) -> Found | None:
    text = line.decode("utf-8", "replace")
    if text in (f"{name} missing", f"{name} ambiguous"):
        return None
    parts = text.split(" ")
    if len(parts) != 3 or not parts[2].isdigit():
        raise _odd(f"{text[:200]!r} for {name!r}")
    return Found(parts[0], parts[1], int(parts[2]))


def _odd(what: str) -> GitError:
    return GitError(("cat-file", "--batch-command"), 0, f"git cat-file answered {what}")
