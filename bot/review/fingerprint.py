"""A finding's identity across reviews: its file and what it says, never its line (a push above it
shifts the line; the finding stays the same).

    fingerprint("app.py", "add() subtracts: it must add.")   # "3f1c…" (16 hex digits)
    same_finding(earlier_path, earlier_title, finding)       # exact fingerprint, or alike texts

The text is normalised first: lowercased, words only (markdown, code fences and punctuation
dropped), numbers dropped (an agent names the line it sits on), at most the first 40 words. Two
agents rarely word one problem alike, so a finding also matches an earlier one on the same file
whose normalised text is at least `merge.SIMILAR` alike.
"""
from __future__ import annotations

import hashlib
import re

from bot.review.findings import Finding
from bot.review.merge import SIMILAR, similarity

MAX_WORDS = 40
_WORD = re.compile(r"[a-z_][a-z0-9_]*")
_SEVERITY_WORDS = frozenset({"important", "nit", "pre", "existing"})


def normalised(body: str) -> str:
    words = [w for w in _WORD.findall(body.lower())]
    while words and words[0] in _SEVERITY_WORDS:  # "Nit:", "Important:" as a person or agent may open with
        words.pop(0)
    return " ".join(words[:MAX_WORDS])


def fingerprint(path: str, body: str) -> str:
    return hashlib.sha256(f"{path}\0{normalised(body)}".encode()).hexdigest()[:16]


def of(finding: Finding) -> str:
    return fingerprint(finding.path, finding.body)


def same_finding(path: str, print_: str, title: str, finding: Finding) -> bool:
    """Whether `finding` says what an earlier finding (its path, fingerprint, normalised title) said."""
    if finding.path != path:
        return False
    return of(finding) == print_ or similarity(title, normalised(title_of(finding.body))) >= SIMILAR


def title_of(body: str) -> str:
    """The first line that says something: what the review lists and the memory keeps."""
    return next((line.strip() for line in body.splitlines() if line.strip()), "")
