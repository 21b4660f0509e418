"""git's stderr keeps no token in any encoding the leak scanner knows (the bot's one masking
function), not only its verbatim form."""
from __future__ import annotations

import base64

from bot.record.leaks import MASK
from bot.workspace.git import redact

TOKEN = "ghs_" + "A1b2C3d4E5" * 4


def test_a_token_verbatim_in_git_stderr_is_masked():
    assert TOKEN not in redact(f"fatal: https://x-access-token:{TOKEN}@github.com/o/r", TOKEN)


def test_a_token_in_a_basic_auth_header_in_git_stderr_is_masked():
    header = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    assert header not in redact(f"> Authorization: Basic {header}", TOKEN)


def test_a_percent_encoded_token_in_git_stderr_is_masked():
    escaped = "".join(f"%{ord(c):02X}" for c in TOKEN)
    assert escaped not in redact(f"fatal: {escaped}", TOKEN)


def test_git_stderr_is_masked_with_the_scanners_mask():
    assert MASK in redact(f"fatal: {TOKEN}", TOKEN)
