"""How much a finding matters, as the agent said through the review tools.

    rank("important") > rank("pre-existing") > rank("nit")
    label("nit")          # "Nit: ", the comment's opening

A pre-existing problem ranks above a nit: it may be a real bug, only not this change's fault.
"""
from __future__ import annotations

from bot.workspace.repo_config_model import SEVERITIES

DEFAULT = "important"  # how a finding given without one ranks: never hidden by a threshold
LABELS = {"important": "**Important:**", "pre-existing": "Pre-existing:", "nit": "Nit:"}
ANNOTATION_LEVELS = {"important": "failure", "pre-existing": "warning", "nit": "notice"}
DESCRIPTION = ("how much it matters: important (a bug, security hole, data loss or broken behaviour this "
               "change brings: it should be fixed before merging), nit (style, naming, a small "
               "improvement: optional), pre-existing (a real problem in code this change touches or "
               "shows, but not caused by it)")


def rank(severity: str | None) -> int:
    """Higher is more severe; none given counts as the default."""
    order = list(reversed(SEVERITIES))
    return order.index(severity) if severity in order else order.index(DEFAULT)


def highest(*severities: str | None) -> str | None:
    return max(severities, key=rank)


def at_least(severity: str | None, threshold: str) -> bool:
    return rank(severity) >= rank(threshold)


def label(severity: str | None) -> str:
    """The comment's opening word, or nothing when no severity was given."""
    return f"{LABELS[severity]} " if severity in LABELS else ""


def named(severity: str | None) -> str:
    return severity or DEFAULT


def lowest() -> str:
    return SEVERITIES[-1]
