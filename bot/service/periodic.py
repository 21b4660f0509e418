"""A task of the service that runs every `interval_s` seconds on its event loop until stopped (the
retention sweep, the schedules' tick); an interval of 0 starts none. A subclass writes `_loop`."""
from __future__ import annotations

import asyncio
from typing import Self


class Periodic:
    def __init__(self, interval_s: float):
        self.interval_s = interval_s
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self._task is not None

    def start(self) -> Self:
        if self.interval_s > 0:
            self._task = asyncio.create_task(self._loop())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        raise NotImplementedError
