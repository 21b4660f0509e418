"""The layer launcher's word (sandbox/process.py `exit_code`): what the bot takes from its done
pipe as a run's exit code is a wait status of an exit or a signal in decimal and a newline; anything
else is no word at all, and the bot waits for the launcher's exit instead."""
from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from sandbox.process import DONE_MOST, exit_code

EXITED = st.integers(0, 255).map(lambda code: code << 8)
SIGNALLED = st.builds(lambda number, core: number | (0x80 if core else 0), st.integers(1, 64), st.booleans())


@given(st.one_of(EXITED, SIGNALLED))
def test_a_wait_status_of_an_exit_or_a_signal_is_the_exit_code_asyncio_would_give(status):
    assert exit_code(f"{status}\n".encode()) == os.waitstatus_to_exitcode(status)


DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=7).map(lambda text: f"{text}\n".encode())


@given(st.one_of(st.binary(max_size=2 * DONE_MOST), DIGITS))
def test_any_other_bytes_are_no_word(data):
    expected = None
    if data.endswith(b"\n") and data[:-1].isdigit() and data[:-1] == str(int(data[:-1])).encode():
        status = int(data[:-1])
        if status <= 0xFFFF and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            expected = os.waitstatus_to_exitcode(status)
    assert exit_code(data) == expected


def test_a_stopped_childs_status_is_no_word():
    assert exit_code(b"4991\n") is None  # 0x137f: stopped by SIGSTOP


def test_a_word_without_its_newline_or_with_a_sign_is_no_word():
    assert [exit_code(word) for word in (b"768", b"+768\n", b"0768\n", b" 768\n", b"768\r\n")] == [None] * 5
