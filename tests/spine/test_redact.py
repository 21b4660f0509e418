"""Secrets never leave in posted text."""
from __future__ import annotations

import base64

from bot.record.redact import MASK, redact


def test_secret_value_is_masked():
    """An env value appearing in the answer is replaced by the mask."""
    assert redact("key is sk-live-abcdef123", ["sk-live-abcdef123"]) == f"key is {MASK}"


def test_base64_form_of_a_secret_is_masked():
    """A secret leaked base64-encoded is masked too."""
    encoded = base64.b64encode(b"hunter2-secret-value").decode()
    assert "hunter2" not in redact(f"x {encoded} y", ["hunter2-secret-value"]).replace(MASK, "")
    assert MASK in redact(f"x {encoded} y", ["hunter2-secret-value"])


def test_installation_token_shape_is_masked_without_being_told():
    """A GitHub token shape is masked even when its value was not passed."""
    assert "ghs_" not in redact("token ghs_" + "a" * 36, [])


def test_short_values_are_left_alone():
    """Very short env values would mask ordinary words; they are skipped."""
    assert redact("the cat", ["cat"]) == "the cat"


def _captured_record(logger_name: str, emit) -> str:
    """What a handler with the redactor installed writes for the records `emit` logs."""
    import io
    import logging

    from bot.record.redact import LogRedactor

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(LogRedactor())
    logger = logging.getLogger(logger_name)
    logger.addHandler(handler)
    try:
        emit(logger)
    finally:
        logger.removeHandler(handler)
    return stream.getvalue()


def test_running_jobs_secret_is_masked_in_log_messages_and_tracebacks():
    """A key of a running job never reaches a log line, even inside an exception's traceback."""
    from bot.record.redact import masked_in_logs

    secrets = ["sk-job-secret-value-42"]

    def emit(logger):
        with masked_in_logs(secrets):
            logger.error("calling with %s", "sk-job-secret-value-42")
            try:
                raise RuntimeError("bad key sk-job-secret-value-42")
            except RuntimeError:
                logger.exception("failed")

    written = _captured_record("test.redact.job", emit)
    assert "sk-job-secret-value-42" not in written and "calling with [redacted]" in written
    assert "RuntimeError" in written


def test_secret_added_while_the_job_runs_is_masked_too():
    """The installation token minted mid-job joins the job's list and is masked from then on."""
    from bot.record.redact import masked_in_logs

    secrets: list[str] = []

    def emit(logger):
        with masked_in_logs(secrets):
            secrets.append("ghs_minted_later_token_0123456789")
            logger.warning("push with ghs_minted_later_token_0123456789")

    assert "ghs_minted_later_token_0123456789" not in _captured_record("test.redact.later", emit)
