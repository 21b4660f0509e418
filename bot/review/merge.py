"""Several agents' findings → one review's comments, deterministically (no model call):

- findings of different agents on the same file and side whose line ranges overlap, and that say
  the same thing (their texts are similar, or they suggest the same replacement), become one
  comment attributed to all of them ("claude, codex");
- findings of different agents on overlapping lines that say different things (different
  replacements, or dissimilar texts) are one comment that keeps each view side by side;
- everything else stays as it was found;
- a merged comment's severity is the highest any of its agents gave.

The order of the input never changes the output: findings are sorted by file, side, lines and the
agents' order first, and ties keep the order each agent gave.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from difflib import SequenceMatcher

from bot.review import severity as levels
from bot.review.findings import Finding

SIMILAR = 0.55  # word-level similarity from which two texts say the same thing
_WORD = re.compile(r"[a-z0-9_]+")


@dataclass
class Merged:
    """One comment of the review: a finding, agreed by `agents`, with any differing views."""

    finding: Finding
    agents: list[str]
    others: list[Finding] = field(default_factory=list)  # different views on overlapping lines

    @property
    def contradiction(self) -> bool:
        return bool(self.others)

    @property
    def severity(self) -> str | None:
        """The highest any agent gave on these lines."""
        return levels.highest(self.finding.severity, *(other.severity for other in self.others))


def merge(findings: list[Finding], agents: list[str] | tuple[str, ...]) -> list[Merged]:
    order = {name: i for i, name in enumerate(agents)}
    ranked = sorted(enumerate(findings), key=lambda item: (
        item[1].path, item[1].side, item[1].first, item[1].line, order.get(item[1].agent, len(order)), item[0]))
    merged: list[Merged] = []
    for _, finding in ranked:
        near = [m for m in merged if _overlap(m.finding, finding) and finding.agent not in _voices(m)]
        same = next((m for m in near if same_meaning(m.finding, finding)), None)
        if same is not None:
            same.agents.append(finding.agent)
            same.finding = replace(same.finding, severity=levels.highest(same.finding.severity, finding.severity))
        elif near:
            near[0].others.append(finding)
        else:
            merged.append(Merged(finding, [finding.agent]))
    return merged


def _voices(merged: Merged) -> set[str]:
    return set(merged.agents) | {f.agent for f in merged.others}


def _overlap(a: Finding, b: Finding) -> bool:
    return a.path == b.path and a.side == b.side and a.first <= b.line and b.first <= a.line


def same_meaning(a: Finding, b: Finding) -> bool:
    """Same replacement, or (when not two different replacements) texts that are alike."""
    if a.suggestion is not None and b.suggestion is not None:
        return _code(a.suggestion) == _code(b.suggestion)
    return similarity(a.body, b.body) >= SIMILAR


def similarity(a: str, b: str) -> float:
    left, right = _WORD.findall(a.lower()), _WORD.findall(b.lower())
    if not left or not right:
        return 0.0
    ordered = SequenceMatcher(None, left, right, autojunk=False).ratio()
    shared = len(set(left) & set(right)) / len(set(left) | set(right))
    return max(ordered, shared)


def _code(text: str) -> list[str]:
    return [line.strip() for line in text.strip("\n").split("\n")]


def tally(merged: list[Merged], agents: list[str] | tuple[str, ...]) -> dict[str, dict[str, int]]:
    """Per agent: findings in all, shared with another agent, and differing views."""
    counts = {name: {"found": 0, "shared": 0, "differs": 0} for name in agents}
    for item in merged:
        for name in item.agents:
            counts.setdefault(name, {"found": 0, "shared": 0, "differs": 0})["found"] += 1
            if len(item.agents) > 1:
                counts[name]["shared"] += 1
        for other in item.others:
            counts.setdefault(other.agent, {"found": 0, "shared": 0, "differs": 0})["found"] += 1
            counts[other.agent]["differs"] += 1
        if item.others:
            for name in item.agents:
                counts[name]["differs"] += 1
    return counts
