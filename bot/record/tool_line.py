"""How one tool call reads to a person, the same in the terminal (`✓ save_file    calc.py`) and in
the tracking comment's checklist (`- [x] save_file calc.py`): the tool's name without the bridge's
prefix, and the one argument that says what the call was about (a path, a command), never a file's
content. Control characters are stripped: a terminal obeys escape sequences."""
from __future__ import annotations

import json
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202a-\u202e\u2066-\u2069]")
_TOOL_PREFIXES = ("mcp__bot__", "mcp__bot::", "mcp_bot_", "bot_", "bot/")
_ARG_KEYS = ("path", "file_path", "command", "cmd", "pattern", "query", "url")
_BULKY_KEYS = ("content", "contents", "text", "patch", "diff", "new_string", "old_string", "data")
DETAIL_CHARS = 70


def safe(text: str | None) -> str:
    """`text` with every control character but newline and tab removed (and tabs made spaces)."""
    return _CONTROL.sub("", (text or "").replace("\r\n", "\n")).replace("\t", "    ")


def one_line(text: str, limit: int) -> str:
    text = " ".join(safe(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_name(name: str | None) -> str:
    name = name or "tool"
    for prefix in _TOOL_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix):]
    return name


def tool_detail(text: str) -> str:
    """The one argument that says what a call was about, else the short arguments (never bulky ones)."""
    try:
        args = json.loads(text) if text else None
    except ValueError:
        return one_line(text, DETAIL_CHARS)
    if isinstance(args, dict):
        for key in _ARG_KEYS:
            if isinstance(args.get(key), str):
                return one_line(args[key], DETAIL_CHARS)
        rest = {k: v for k, v in args.items() if k not in _BULKY_KEYS}
        return one_line(json.dumps(rest, ensure_ascii=False), DETAIL_CHARS) if rest else ""
    return one_line(text, DETAIL_CHARS)


def call_line(name: str, detail: str, error: str | None = None, name_width: int = 0) -> str:
    """`save_file calc.py`, or `run pytest — exit 1`; `name_width` aligns the details in a column."""
    tail = f" — {error}" if error else ""
    return f"{name:<{name_width}} {detail}{tail}".rstrip()
