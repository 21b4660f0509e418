"""The one way to end a job early from anywhere below it: raise `Stop` with the terminal text."""
from __future__ import annotations

from bot.errors import BotError


class Stop(BotError):
    """End the job now with this terminal text."""

    def __init__(self, text: str, status: str = "failed", *, because: str | None = None) -> None:
        """`because`: why the job ended early, in a few words for the operator's outcome line
        ("no credentials")."""
        super().__init__(text)
        self.text, self.status, self.because = text, status, because
