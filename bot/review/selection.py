"""Which merged findings a review posts as comments, under the repository's threshold
(reviews.min_severity) and cap (reviews.max_comments).

    chosen = select(merged, minimum="nit", cap=10)   # Selection(posted, summarised, below)

Over the cap, the most severe findings become comments (ties in the order of the diff) and the
rest are listed one line each in the review body; under the threshold they are counted there.
Nothing is dropped without a word.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bot.review.merge import Merged
from bot.review.severity import at_least, rank


@dataclass
class Selection:
    posted: list[Merged] = field(default_factory=list)  # inline comments, in the diff's order
    summarised: list[Merged] = field(default_factory=list)  # over the cap: one line each in the body
    below: list[Merged] = field(default_factory=list)  # under the threshold: counted, not posted


def select(merged: list[Merged], minimum: str, cap: int) -> Selection:
    kept = [item for item in merged if at_least(item.severity, minimum)]
    chosen = sorted(range(len(kept)), key=lambda i: (-rank(kept[i].severity), i))[:max(cap, 0)]
    return Selection([kept[i] for i in sorted(chosen)], [item for i, item in enumerate(kept) if i not in chosen],
                     [item for item in merged if not at_least(item.severity, minimum)])
