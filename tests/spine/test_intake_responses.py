"""The intake's responses: orjson-rendered, byte for byte what Starlette's JSONResponse sends."""
from __future__ import annotations

from starlette.responses import JSONResponse

from bot.web.intake import _JSON


def test_rendered_body_and_headers_match_starlette_json_response():
    """Same bytes (compact, UTF-8, non-ASCII kept) and the same headers as JSONResponse."""
    content = {"ok": False, "reason": "signature rejected: naïve ✓", "job": 12, "queued": None}
    ours, theirs = _JSON(content, status_code=401), JSONResponse(content, status_code=401)
    assert (ours.body, ours.raw_headers, ours.status_code) == (theirs.body, theirs.raw_headers, theirs.status_code)
