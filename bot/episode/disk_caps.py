"""An episode whose sandbox filled a capped folder ends with the limit named.

Tier 1 caps the writable worktree and the CLI home with the kernel (sandbox/layers.py): a write
past the cap fails with ENOSPC, a folder that stays full stops the sandbox, and the changes
reach the host folder when the sandbox has ended. The sandbox's outcome lists the full folders
and those whose changes could not be applied; this turns the first into the stop reason.
"""
from __future__ import annotations

from pathlib import Path

from adapters.base import Result
from bot.episode.resume_state import empty
from sandbox.base import SandboxConfig
from sandbox.disk import human

# layer -> what it is called, the operator's variable, the repository's `limits:` key
NAMES = {"worktree": ("the worktree", "BOT_LIMIT_WORKTREE", "worktree"),
         "home": ("the CLI home", "BOT_LIMIT_HOME", "home")}


def stop_for_full_layer(result: Result, config: SandboxConfig) -> None:
    """A full layer, or one whose changes could not be applied to the host folder, outranks what
    the CLI said. A full home would stop every later turn: it is emptied, so the next turn
    starts a fresh session."""
    unkept = [entry for entry in result.outcome.get("disk_unkept") or [] if entry.get("layer") in NAMES]
    if unkept:
        what = NAMES[unkept[0]["layer"]][0]
        result.ok = False
        result.failure = "killed"
        result.error = f"the sandbox's changes to {what} could not be kept: {unkept[0].get('error')}"
        return
    full = [entry.get("layer") for entry in result.outcome.get("disk_full") or []]
    layer = next((name for name in full if name in NAMES), None)
    if layer is None:
        return
    what, variable, key = NAMES[layer]
    cap = config.limits.worktree_growth_bytes if layer == "worktree" else config.limits.home_bytes
    reason = (f"stopped: {what} reached its {human(cap)} disk cap ({variable}, or the repository's "
              f"limits.{key}); writes past it failed with \"No space left on device\"")
    if layer == "home":
        empty(Path(config.home))
        reason += " (it was cleared: the next turn starts a fresh session)"
    result.ok = False
    result.failure, result.error = "killed", reason
    result.outcome["disk_quota"] = what
