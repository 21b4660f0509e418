"""The spine's queue, session-map, intake and secret-store tests, run again on each backend
(the `backend` fixture of tests/store/conftest.py points BOT_DATABASE_URL at a fresh PostgreSQL
database, or leaves the data dir's SQLite file)."""
from __future__ import annotations

import pytest

from tests.credentials.test_secrets import (  # noqa: F401
    test_audit_rows_record_set_and_delete_without_values,
    test_delete_removes_the_row,
    test_listing_shows_fingerprints_only,
    test_missing_secret_is_none,
    test_replace_keeps_one_row,
    test_round_trip_returns_the_stored_value,
)
from tests.spine.test_conversations import (  # noqa: F401
    test_each_agent_keeps_its_own_session,
    test_fresh_session_restarts_the_count,
    test_turns_are_counted_and_session_id_kept,
)
from tests.spine.test_intake import (  # noqa: F401
    client,
    test_a_replayed_comment_under_a_new_delivery_id_creates_one_job,
    test_an_outsiders_stop_gets_the_notice_and_no_stop_job,
    test_command_from_an_owner_is_queued,
    test_duplicate_delivery_creates_one_job,
    test_failed_job_can_be_redelivered,
    test_non_writer_gets_one_notice_per_thread_and_no_episode,
    test_stop_is_queued_as_a_job_and_flags_nothing_at_the_intake,
)
from tests.spine.test_queue import *  # noqa: F403


@pytest.fixture(autouse=True)
def on_each_backend(backend):
    yield backend
