"""Sandboxes for agent CLIs: tier 1 (bubblewrap, the default floor) and tier 0 (process jail).

`select_spawner(tier, host)` gives the spawner of a tier; `doctor_checks(host)` lists each floor
check with its verdict for `bot doctor`; `container_caps(host)` says when the container's own cgroup
is what caps the episodes (then one runs at a time). The bot passes the operator's settings in (`Host`);
nothing here reads the bot's configuration.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.base import Host, Spawner


def select_spawner(tier: int, host: Host | None = None) -> Spawner:
    """The Spawner for `tier`: 1 → Tier1Spawner, 0 → Tier0Spawner; `host` is the operator's
    settings for this machine (sandbox.base.Host)."""
    from sandbox.base import Host
    if tier == 0:
        from sandbox.tier0 import Tier0Spawner
        return Tier0Spawner()
    if tier == 1:
        from sandbox.tier1 import Tier1Spawner
        return Tier1Spawner(host=host or Host())
    raise ValueError(f"unknown sandbox tier {tier!r} (BOT_SANDBOX_TIER is 0 or 1)")


def doctor_checks(host: Host | None = None) -> list[tuple[str, bool, str]]:
    """Each tier-1 floor check as (name, ok, detail), measured with real probes."""
    from sandbox import preflight
    from sandbox.base import Host
    return preflight.checks(host or Host())


def container_caps(host: Host | None = None) -> str | None:
    """How the container's own cgroup caps the episodes, when it is what caps them: a worker then
    runs one episode at a time. None when each episode gets cgroups of its own (or none can be had)."""
    from sandbox import preflight
    from sandbox.base import Host
    return preflight.container_caps(host or Host())
