"""The values one job must never let leave, held in one place.

    secrets = Secrets()
    secrets.add(token)            # from now on masked everywhere that holds `secrets`
    recorder = Recorder(db, secrets=secrets)
    secrets.mask("... token ...")  # "... [REDACTED] ..."

The log masker, the tracking comment and the job's recorder hold the same object, so a value added
late (the bridge's token, the relay's, a renewed installation token) is masked by all of them at
once. It only grows: nothing that was secret stops being one while the job runs.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator

from bot.record.redact import redact


class Secrets:
    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: list[str] = []
        self._snapshot: tuple[str, ...] = ()
        self.extend(values)

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
        return self._snapshot

    def mask(self, text: str) -> str:
        return redact(text, self._values)

    def __iter__(self) -> Iterator[str]:
        return iter(self._snapshot)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, value: object) -> bool:
        return value in self._values
