"""Log lines that say which job they belong to: `BOT_LOG_FORMAT=json` writes one JSON object a line,
and every line logged while a job runs carries its job id, thread and run id.

The ids live in context variables, set where a job starts (`job_context`) and where its run is
created (`bind_run`); asyncio copies the context into every task a job starts, so a line logged by
the bridge or the relay of that job carries them too, and lines of jobs running side by side never
mix. A logging filter on the handler copies them onto each record, for either format.
"""
from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from collections.abc import Iterator

_JOB: contextvars.ContextVar[str | None] = contextvars.ContextVar("bot_job", default=None)
_THREAD: contextvars.ContextVar[str | None] = contextvars.ContextVar("bot_thread", default=None)
_RUN: contextvars.ContextVar[str | None] = contextvars.ContextVar("bot_run", default=None)
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(job_suffix)s"


@contextlib.contextmanager
def job_context(job_id: int | str, thread: str) -> Iterator[None]:
    """Everything logged inside (and in tasks started inside) names this job and thread."""
    tokens = (_JOB.set(str(job_id)), _THREAD.set(thread), _RUN.set(None))
    try:
        yield
    finally:
        _RUN.reset(tokens[2])
        _THREAD.reset(tokens[1])
        _JOB.reset(tokens[0])


def bind_run(run_id: str) -> None:
    """The job's run was created: its lines from now on name it too (inside a job only, so a run
    recorded outside one, as by `bot run`, never leaks into unrelated lines)."""
    if _JOB.get() is not None:
        _RUN.set(run_id)


def current() -> dict[str, str]:
    return {name: value for name, value in (("job", _JOB.get()), ("thread", _THREAD.get()), ("run", _RUN.get()))
            if value is not None}


class JobFilter(logging.Filter):
    """Copies the job, thread and run of the current context onto the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = current()
        # not `record.thread`: a LogRecord's own attribute (the OS thread id)
        record.bot_job, record.bot_thread, record.bot_run = fields.get("job"), fields.get("thread"), fields.get("run")
        record.job_suffix = "".join(f" {k}={v}" for k, v in fields.items())
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time (UTC, ISO 8601), level, logger, message, the job's ids, and
    the traceback when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
                "level": record.levelname, "logger": record.name, "message": record.getMessage()}
        for name in ("job", "thread", "run"):
            value = getattr(record, f"bot_{name}", None)
            if value is not None:
                line[name] = value
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure(level: str, log_format: str) -> logging.Handler:
    """The root handler of `bot serve`: text or JSON lines (`log_format`, BOT_LOG_FORMAT), job ids on each."""
    handler = logging.StreamHandler()
    handler.addFilter(JobFilter())
    handler.setFormatter(JsonFormatter() if log_format.strip().lower() == "json"
                         else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return handler
