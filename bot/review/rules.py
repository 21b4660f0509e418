"""Review rules the repository keeps (docs/reviews.md, "Rules in the repository"): `REVIEW.md` at the
root and in any folder (it applies to the files under its folder), the `## Review` section of an
`AGENTS.md`, and `.github/bot.yml` `reviews.rules:` (a path glob to an instruction), all read from
the default branch (bot/review/rules_read.py), never from the pull request's head.

    rule = rule_file("api/REVIEW.md", text)             # Rule, or None (an AGENTS.md without a Review section)
    rules = from_config(cfg.reviews.rules)               # one Rule per glob
    applied = applicable(rules, ["api/x.py"], skipped=found.skipped)
    applied.sent, applied.unsent                         # within the budget / named only
    applied.note()                                       # the review body's line naming them

The rules are untrusted text, like the rest of the repository: they reach the agents fenced, as
instructions they may follow about what to look for; the review's scope, tools and severity
threshold are the bot's (bot/review/findings.py, selection.py) and no text changes them.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.record import inert
from bot.record.hidden import clean_markdown
from bot.workspace import rule_globs

REVIEW_FILE, AGENTS_FILE = "REVIEW.md", "AGENTS.md"
RULE_FILES = (REVIEW_FILE, AGENTS_FILE)  # exactly these names, nothing else
CONFIG_SOURCE = ".github/bot.yml"
BUDGET_CHARS = 8_000  # of rule text in one agent's request; the rest is named
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Rule:
    source: str  # the file it is written in, from the repository's root
    text: str  # hidden content removed (bot/record/hidden.py)
    glob: str | None = None  # a reviews.rules entry's glob; None for a rule file

    @property
    def folder(self) -> str:
        return self.source.rpartition("/")[0]

    def applies_to(self, path: str) -> bool:
        if self.glob is not None:
            return rule_globs.matches(self.glob, path)
        return not self.folder or path.startswith(self.folder + "/")

    @property
    def label(self) -> str:
        """How the review names it: its file, and for a bot.yml rule its glob."""
        return inert.code(self.source) + (f" ({inert.code(self.glob)})" if self.glob is not None else "")

    @property
    def covers(self) -> str:
        if self.glob is not None:
            return f"files matching {inert.code(self.glob)}"
        return f"files under {inert.code(self.folder + '/')}" if self.folder else "every file"


@dataclass
class Applied:
    """The rules that apply to one review's files: those sent, those over the budget (named), and
    the rule files that were not read, counted by why."""

    sent: list[Rule] = field(default_factory=list)
    unsent: list[Rule] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    budget: int = BUDGET_CHARS

    def note(self) -> str:
        """The review body's line: every rule file that applied, by its path from the root."""
        parts = []
        if self.sent:
            parts.append(f"Rules applied: {', '.join(r.label for r in self.sent)}.")
        if self.unsent:
            parts.append(f"Rules not sent (over the {self.budget:,}-character budget): "
                         f"{', '.join(r.label for r in self.unsent)}.")
        if self.skipped:
            parts.append(f"Not read as rules: {counted(self.skipped)}.")
        return " ".join(parts)


def counted(reasons: Counter[str]) -> str:
    return ", ".join(f"{n} {why}" for why, n in sorted(reasons.items()))


def rule_file(path: str, text: str) -> Rule | None:
    """A rule file's rule: a REVIEW.md whole, an AGENTS.md's `## Review` section; None when it holds none."""
    name = path.rpartition("/")[2]
    if name == AGENTS_FILE:
        section = review_section(text)
        return Rule(path, _clean(section)) if section else None
    if name == REVIEW_FILE and text.strip():
        return Rule(path, _clean(text))
    return None


def from_config(entries: Iterable[tuple[str, str]]) -> list[Rule]:
    return [Rule(CONFIG_SOURCE, _clean(text), glob) for glob, text in entries]


def review_section(markdown: str) -> str | None:
    """The `## Review` section: from that heading to the next heading of level two or one (a
    heading inside a fenced code block is code, not a heading)."""
    found: list[str] | None = None
    fence = ""
    for line in markdown.splitlines():
        if fence:
            fence = "" if line.strip().startswith(fence) and set(line.strip()) == {fence[0]} else fence
        elif opened := _FENCE.match(line):
            fence = opened.group(1)
        elif heading := _HEADING.match(line):
            level, title = len(heading.group(1)), (heading.group(2) or "").strip()
            if found is not None and level <= 2:
                break
            if found is None and level == 2 and title.lower() == "review":
                found = []
                continue
        if found is not None:
            found.append(line)
    text = "\n".join(found or []).strip()
    return text or None


def applicable(rules: Sequence[Rule], changed: Iterable[str], *, budget: int = BUDGET_CHARS,
               skipped: Counter[str] | None = None) -> Applied:
    """The rules that apply to any of `changed`, bot.yml's first (in the order written), then the
    files from the root down; whole rules are sent while their text fits `budget`, the rest named."""
    paths = list(changed)
    hits = [rule for rule in rules if any(rule.applies_to(path) for path in paths)]
    hits.sort(key=lambda r: (r.glob is None, r.source.count("/") if r.glob is None else 0,
                             r.source if r.glob is None else ""))
    applied, used = Applied(skipped=Counter(skipped or {}), budget=budget), 0
    for rule in hits:
        if used + len(rule.text) <= budget:
            applied.sent.append(rule)
            used += len(rule.text)
        else:
            applied.unsent.append(rule)
    return applied


def _clean(text: str) -> str:
    """What a reader of the file on GitHub sees: no HTML comment or invisible character."""
    return clean_markdown(text).text.strip()
