"""The forms of a key the masking layer knows (adapters/masking/leaks.py), as the relay's key tests
write them into what a provider sends back."""
from __future__ import annotations

import base64
import html
from urllib.parse import quote

ZERO_WIDTH = "\u200b"


def _b64_at(key: str, shift: int, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(b"ab"[:shift] + key.encode() + b"!").decode()


ENCODINGS = {
    "verbatim": lambda k: k,
    "base64": lambda k: _b64_at(k, 0),
    "base64 shifted by one": lambda k: _b64_at(k, 1),
    "base64 shifted by two": lambda k: _b64_at(k, 2),
    "URL-safe base64": lambda k: _b64_at(k + "??>>", 1, urlsafe=True),
    "base32": lambda k: base64.b32encode(b"x" + k.encode()).decode(),
    "hex": lambda k: k.encode().hex(),
    "upper-case hex": lambda k: k.encode().hex().upper(),
    "percent-encoded": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "percent-encoded in part": lambda k: quote(k[:10], safe="") + "".join(f"%{b:02x}" for b in k[10:].encode()),
    "JSON unicode escapes": lambda k: "".join(f"\\u{ord(c):04x}" for c in k),
    "HTML entities": lambda k: "".join(f"&#{ord(c)};" for c in k),
    "HTML escaped": lambda k: html.escape(k),
    "reversed": lambda k: k[::-1],
    "zero-width characters inserted": lambda k: ZERO_WIDTH.join(k),
    "split across lines": lambda k: k[:12] + "\n" + k[12:],
    "full-width": lambda k: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in k),
    "a long run of it": lambda k: k[3:25],
}
