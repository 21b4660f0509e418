"""The layer launcher's word (sandbox/process.py `heard`): what the bot takes from its pipe is a
wait status of an exit or a signal in decimal and a newline ("done"), or "apply", that status and
0/1 per layer, and a newline (an offer to apply the sandbox's writes); anything else is no word at
all, and the bot waits for the launcher's exit instead."""
from __future__ import annotations

import os
import re

from hypothesis import given
from hypothesis import strategies as st

from sandbox.process import WORD_MOST, Word, heard

EXITED = st.integers(0, 255).map(lambda code: code << 8)
SIGNALLED = st.builds(lambda number, core: number | (0x80 if core else 0), st.integers(1, 64), st.booleans())
STATUS = st.one_of(EXITED, SIGNALLED)
FULL = st.text(alphabet="01", min_size=1, max_size=8)


@given(STATUS)
def test_a_done_word_is_the_exit_code_asyncio_would_give(status):
    assert heard(f"{status}\n".encode()) == Word(os.waitstatus_to_exitcode(status))


@given(STATUS, FULL)
def test_an_offer_carries_the_exit_code_and_each_layers_full_mark(status, full):
    assert heard(f"apply {status} {full}\n".encode()) == Word(os.waitstatus_to_exitcode(status), full)


def _expected(data: bytes) -> Word | None:
    """The allowlist, said another way."""
    form = re.fullmatch(rb"(?:apply ([0-9]+) ([01]{1,8})|([0-9]+))\n", data)
    if form is None:
        return None
    digits = form[1] or form[3]
    if digits != str(int(digits)).encode() or int(digits) > 0xFFFF:
        return None
    status = int(digits)
    if not (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
        return None
    return Word(os.waitstatus_to_exitcode(status), form[2].decode() if form[2] else None)


DIGITS = st.text(alphabet="0123456789", min_size=1, max_size=7)
NEAR = st.one_of(DIGITS.map(lambda text: f"{text}\n".encode()),
                 st.tuples(DIGITS, st.text(alphabet="012", min_size=0, max_size=10)).map(
                     lambda parts: f"apply {parts[0]} {parts[1]}\n".encode()))


@given(st.one_of(st.binary(max_size=2 * WORD_MOST), NEAR))
def test_any_other_bytes_are_no_word(data):
    assert heard(data) == _expected(data)


def test_a_stopped_childs_status_is_no_word():
    assert heard(b"4991\n") is None  # 0x137f: stopped by SIGSTOP


def test_a_word_without_its_newline_or_with_a_sign_is_no_word():
    words = (b"768", b"+768\n", b"0768\n", b" 768\n", b"768\r\n", b"apply 0 01", b"apply 0 012\n", b"apply 0\n",
             b"apply  0 1\n", b"APPLY 0 1\n", b"apply 0 1 \n", b"apply 0 111111111\n")
    assert [heard(word) for word in words] == [None] * len(words)
