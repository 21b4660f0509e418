"""A provider that holds its answer to the agent's main request until released, so that a test can
stop a run while its model call is in flight in the relay."""
from __future__ import annotations

import threading

from tests.fakes.provider import FakeProvider, Request, Turn


class StallingProvider(FakeProvider):
    def __init__(self) -> None:
        super().__init__()
        self.asked, self.release = threading.Event(), threading.Event()

    def answer(self, req: Request) -> Turn:
        turn = super().answer(req)
        if not req.auxiliary:
            self.asked.set()
            self.release.wait(60)
        return turn
