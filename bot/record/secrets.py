"""The values one job must never let leave, held in one place.

    secrets = Secrets()
    secrets.add(token)            # from now on masked everywhere that holds `secrets`
    recorder = Recorder(db, secrets=secrets)
    secrets.mask("... token ...")  # "... [REDACTED] ..."
    secrets.follow(lambda: thread_token())  # a value that changes (a renewed token): each one it takes is kept

The log masker, the tracking comment and the job's recorder hold the same object, so a value added
late (the bridge's token, the relay's, a renewed installation token) is masked by all of them at
once. It only grows: nothing that was secret stops being one while the job runs.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from bot.record.redact import redact


class Secrets:
    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: list[str] = []
        self._snapshot: tuple[str, ...] = ()
        self._sources: list[Callable[[], str | None]] = []
        self.extend(values)

    def follow(self, source: Callable[[], str | None]) -> None:
        """Mask whatever `source` returns when the secrets are next read, and every value it returned
        before (the thread's installation token, renewed in a long job, held where it is renewed)."""
        self._sources.append(source)
        self._pull()

    def _pull(self) -> None:
        for source in self._sources:
            self.add(source())

    def add(self, value: str | None) -> None:
        """Masked from now on; empty values and values held already are ignored."""
        if value and value not in self._values:
            self._values.append(value)
            self._snapshot = tuple(sorted(self._values))

    def extend(self, values: Iterable[str | None]) -> None:
        for value in values:
            self.add(value)

    def snapshot(self) -> tuple[str, ...]:
        """The values as they are now, for work done later elsewhere (the record's writer thread)."""
        self._pull()
        return self._snapshot

    def mask(self, text: str) -> str:
        self._pull()
        return redact(text, self._values)

    def __iter__(self) -> Iterator[str]:
        self._pull()
        return iter(self._snapshot)

    def __len__(self) -> int:
        self._pull()
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        self._pull()
        return value in self._values
