"""A CLI's stderr tail and error line keep no credential in any encoding the leak scanner knows:
the adapters mask with the bot's one masking function, not a plain search."""
from __future__ import annotations

import base64
from pathlib import Path

from adapters import base
from adapters.base import Credentials, Episode

KEY = "sk-ant-api03-" + "Q" * 24 + "realkey"


def finished(stderr: str):
    ep = Episode(prompt="p", workdir="/workspace", home=Path("/nonexistent/home"),
                 credentials=Credentials(env={"ANTHROPIC_API_KEY": KEY}))
    return base.get("claude").finish(ep, [], 1, stderr, None)


def test_a_key_in_base64_on_stderr_is_masked_in_the_tail():
    result = finished(f"auth header: {base64.b64encode(KEY.encode()).decode()}\n")
    assert base64.b64encode(KEY.encode()).decode() not in result.stderr_tail


def test_a_key_in_base64_on_stderr_is_masked_in_the_error():
    result = finished(f"auth header: {base64.b64encode(KEY.encode()).decode()}\n")
    assert result.error is not None and base64.b64encode(KEY.encode()).decode()[:20] not in result.error


def test_a_key_verbatim_on_stderr_is_masked_in_the_tail():
    assert KEY not in finished(f"using key {KEY}\n").stderr_tail
