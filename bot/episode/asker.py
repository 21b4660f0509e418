"""What an episode knows of the job that asked for it: the job's settings, the thread that keys its
session and spend, and whose credentials it may use. The job's context meets it; nothing here
reads the GitHub thread."""
from __future__ import annotations

from typing import Protocol

from bot.config import Settings
from bot.relay.budgets import AutomationSpend


class Asker(Protocol):
    @property
    def settings(self) -> Settings: ...

    @property
    def conversation(self) -> str: ...

    @property
    def requester_id(self) -> int: ...

    @property
    def repo_id(self) -> int: ...

    @property
    def installation_id(self) -> int | None: ...

    @property
    def automation_spend(self) -> AutomationSpend | None: ...
