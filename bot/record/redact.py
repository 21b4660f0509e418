"""Remove every secret value from text before it leaves the process (comments, logs, records)."""
from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator

from bot.record.leaks import MASK, mask

__all__ = ["MASK", "redact", "masked_in_logs", "running_secrets", "LogRedactor", "install_log_redaction"]


def redact(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret value (in any encoding bot.record.leaks knows) and known token
    shapes replaced by a mask; a leak that cannot be located replaces its lines, or the text."""
    return mask(text, secrets)


# Log lines: the secrets of the jobs running now, plus the token shapes, are masked in every
# record (messages and tracebacks), whichever module logs it.
_running_jobs: dict[int, Iterable[str]] = {}


@contextlib.contextmanager
def masked_in_logs(secrets: Iterable[str]) -> Iterator[None]:
    """While the block runs, every value in `secrets` (a list or a `Secrets`, which may grow) is
    masked in logs."""
    _running_jobs[id(secrets)] = secrets
    try:
        yield
    finally:
        _running_jobs.pop(id(secrets), None)


def running_secrets() -> list[str]:
    """The secrets of every job running now: what must not leave in a log line, a comment or a
    commit, whichever job's code is about to send it."""
    return [value for values in list(_running_jobs.values()) for value in values]


class LogRedactor(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        secrets = running_secrets()
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, None
        record.msg, record.args = redact(message, secrets), None
        return True


def install_log_redaction() -> None:
    """Attach the redactor to every handler of the root logger (call after logging is configured)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, LogRedactor) for f in handler.filters):
            handler.addFilter(LogRedactor())
