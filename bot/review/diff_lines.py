"""Which lines of a pull request's diff a review comment may sit on, per file and side, as GitHub
decides it: the lines its unified diff shows. On the RIGHT side (the new file) the added and the
context lines, numbered in the new file; on the LEFT side (the old file) the deleted and the
context lines, numbered in the old file. A multi-line comment must stay inside one hunk.

    diff = DiffLines.from_files(files)          # GET /repos/{o}/{r}/pulls/{n}/files
    diff.check("app.py", "RIGHT", 12, start_line=10)   # raises OutsideDiff with what to do instead

The patches come from GitHub (the same text GitHub validates a review against), never from the
agent.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.errors import BotError

SIDES = ("RIGHT", "LEFT")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class OutsideDiff(BotError, ValueError):
    """A review comment the diff cannot carry; the message tells the model what it may do."""


@dataclass(frozen=True)
class Hunk:
    left: frozenset[int]  # old-file lines shown: deleted and context
    right: frozenset[int]  # new-file lines shown: added and context

    def lines(self, side: str) -> frozenset[int]:
        return self.right if side == "RIGHT" else self.left


@dataclass
class FileDiff:
    path: str
    hunks: list[Hunk] = field(default_factory=list)

    def hunk_of(self, side: str, line: int) -> int | None:
        return next((i for i, hunk in enumerate(self.hunks) if line in hunk.lines(side)), None)

    def ranges(self, side: str) -> str:
        """The commentable lines of one side, as short ranges: "3-9, 20-31"."""
        return ", ".join(_compact(sorted(hunk.lines(side))) for hunk in self.hunks if hunk.lines(side)) or "none"


def parse_patch(path: str, patch: str) -> FileDiff:
    """One file's patch (GitHub's `patch` field: hunks without the file header)."""
    diff = FileDiff(path)
    left: set[int] = set()
    right: set[int] = set()
    old = new = 0
    for raw in (patch or "").split("\n"):
        match = _HUNK.match(raw)
        if match:
            if left or right:
                diff.hunks.append(Hunk(frozenset(left), frozenset(right)))
            left, right = set(), set()
            old, new = int(match.group(1)), int(match.group(3))
        elif raw.startswith("+"):
            right.add(new)
            new += 1
        elif raw.startswith("-"):
            left.add(old)
            old += 1
        elif raw.startswith(" "):
            left.add(old)
            right.add(new)
            old, new = old + 1, new + 1
        # "\ No newline at end of file" and anything else: not a line of either file
    if left or right:
        diff.hunks.append(Hunk(frozenset(left), frozenset(right)))
    return diff


def _compact(numbers: list[int]) -> str:
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)


@dataclass
class DiffLines:
    files: dict[str, FileDiff]
    no_patch: tuple[str, ...] = ()  # binary files, or too large for GitHub to show

    @classmethod
    def from_files(cls, entries: list[dict]) -> DiffLines:
        files, no_patch = {}, []
        for entry in entries:
            name = entry.get("filename") or ""
            if entry.get("patch"):
                files[name] = parse_patch(name, entry["patch"])
            elif name:
                no_patch.append(name)
        return cls(files, tuple(no_patch))

    def check(self, path: str, side: str, line: int, start_line: int | None = None) -> None:
        """Nothing when GitHub would accept a comment there; else OutsideDiff saying why and where."""
        if side not in SIDES:
            raise OutsideDiff(f"side must be RIGHT (the new code) or LEFT (removed code), not {side!r}.")
        diff = self.files.get(path)
        if diff is None:
            raise OutsideDiff(self._unknown_path(path))
        first = line if start_line is None else start_line
        if first > line:
            raise OutsideDiff(f"start_line {first} is after line {line}; start_line must be the first line.")
        hunk = diff.hunk_of(side, line)
        if hunk is None or diff.hunk_of(side, first) != hunk:
            where = f"line {line}" if first == line else f"lines {first}-{line}"
            raise OutsideDiff(
                f"{where} of {path} ({side} side) {'is' if first == line else 'are'} not in one hunk of the "
                f"pull request's diff, so GitHub cannot show a comment there. Lines you can comment on, "
                f"{side} side: {diff.ranges(side)}. Pick one of those (a multi-line range must stay in one "
                f"hunk), or mention the line in the comment of a nearby changed line.")

    def _unknown_path(self, path: str) -> str:
        if path in self.no_patch:
            return f"{path} has no text diff (a binary file, or too large for GitHub to show): comment elsewhere."
        listed = ", ".join(sorted(self.files)[:30]) or "none"
        return f"{path} is not changed by this pull request. The changed files are: {listed}."
