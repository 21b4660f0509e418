"""The Action's thread: its comments listed once for the restore and the pipeline both.

The restore reads the bot's markers from the thread's comments before the pipeline runs
(bot/cli/action_spend_floor.py); the pipeline then reads the same comments for the agent's context.
The first listing is kept and handed to the next caller, so the step lists the thread once."""
from __future__ import annotations

from bot.github.client import Thread


class ListedOnce(Thread):
    """A Thread whose first listing of comments is handed to the next caller instead of a second."""

    _kept: list[dict] | None = None

    async def comments(self) -> list[dict]:
        if self._kept is not None:
            kept, self._kept = self._kept, None
            return kept
        return await super().comments()

    async def comments_to_share(self) -> list[dict]:
        """List the comments and keep the listing for the next `comments()` (the pipeline's)."""
        listed = await super().comments()
        self._kept = [dict(comment) for comment in listed]  # the pipeline cleans its copy in place
        return listed
