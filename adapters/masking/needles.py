"""Secrets turned into what the leak scanner (adapters/masking/leaks.py) searches for: the exact forms
(verbatim, JSON- and URL-escaped, base64 at every alignment) and, for key-like secrets, the
*needles* whose long runs count in each view (itself, reversed, hex, base64)."""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote

from adapters.masking.views import URLSAFE, skeleton_of

MIN_SECRET_LENGTH = 6  # shorter values would mask ordinary words
MIN_FRAGMENT = 10  # a shorter run of a secret could be an ordinary word
FRAGMENT = 16  # a run this long of any secret is a leak (or half the secret, if that is less)


def exact_variants(values: tuple[str, ...], searched: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """(form, how) pairs, leaving out those the views find by themselves for the `searched` units."""
    variants: dict[str, str] = {}
    for value in values:
        value = (value or "").strip()
        if len(value) < MIN_SECRET_LENGTH:
            continue
        for unit in [value, *_lines(value), *_json_tokens(value)]:
            found_by_views = unit in searched
            forms = {unit: "verbatim", **_encoded_forms(unit)}
            for form, how in forms.items():
                if not (found_by_views and how in _VIEWS_FIND):
                    variants.setdefault(form, how)
    return sorted(((v, how) for v, how in variants.items() if len(v) >= MIN_SECRET_LENGTH),
                  key=lambda item: len(item[0]), reverse=True)


_VIEWS_FIND = ("verbatim", "base64-encoded", "JSON-escaped")


def _lines(value: str) -> list[str]:
    """Multi-line secrets (PEM keys, auth.json) leak line by line."""
    return [line.strip() for line in value.splitlines() if len(line.strip()) >= 16] if "\n" in value else []


def _encoded_forms(value: str) -> dict[str, str]:
    """base64 (standard and URL-safe) at each byte alignment, so the value is found inside a
    longer encoded string too (`user:token` in a Basic header); JSON- and URL-escaped."""
    forms = {json.dumps(value)[1:-1]: "JSON-escaped", quote(value, safe=""): "URL-encoded"}
    for core in _aligned(value.encode(), base64.b64encode, 3, 4):
        forms.setdefault(core, "base64-encoded")
        forms.setdefault(core.translate(URLSAFE), "base64-encoded")
    forms.pop(value, None)
    return forms


def _aligned(raw: bytes, encode: Callable[[bytes], bytes], block: int, chars: int) -> list[str]:
    """The encoding of `raw` preceded by 0..block-1 other bytes, cut to the characters that depend
    on `raw` alone: whatever surrounds the secret, one of these is inside its encoding."""
    cores = []
    for shift in range(block):
        encoded = encode(b"\0" * shift + raw).decode()
        start = -(-chars * shift // block)
        cores.append(encoded[start:chars * (shift + len(raw)) // block])
    return cores


def _json_tokens(value: str) -> list[str]:
    """The long, space-free strings inside a JSON credential (access and refresh tokens)."""
    if not value.startswith(("{", "[")):
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return []
    found, stack = [], [parsed]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and len(item) >= 16 and not any(c.isspace() for c in item):
            found.append(item)
    return found


def _random_looking(unit: str) -> bool:
    """Runs of a secret are only searched for when the secret looks like a key (a single word with
    letters and digits): a run of `the-database-password` is ordinary prose."""
    return (len(unit) >= MIN_FRAGMENT and not unit.startswith(("{", "["))
            and not any(c.isspace() for c in unit)
            and any(c.isdigit() for c in unit) and any(c.isalpha() for c in unit)
            and len(skeleton_of(unit)) >= MIN_FRAGMENT)


def _least(length: int) -> int:
    """The shortest run of a secret of `length` characters that counts as leaking it."""
    return min(length, max(MIN_FRAGMENT, min(FRAGMENT, -(-length // 2))))


@dataclass(frozen=True)
class Needle:
    text: str
    least: int  # in characters of the view
    how: str


def fragment_needles(unit: str) -> dict[str, list[Needle]]:
    """Per view: the forms of `unit` whose long runs count as a leak. (base32 is found by decoding
    the text's base32-looking runs and looking for the raw secret in them.)"""
    raw, skeleton = unit.encode(), skeleton_of(unit)
    k = _least(len(raw))
    needles: dict[str, list[Needle]] = {"skeleton": [], "hex": [], "base64": [],
                                         "raw": [Needle(raw.decode("latin-1"), k, "base32-encoded")]}
    least = _least(len(skeleton))  # _random_looking: at least MIN_FRAGMENT letters and digits
    needles["skeleton"] += [Needle(skeleton, least, "as written, or with characters inserted"),
                            Needle(skeleton[::-1], least, "reversed")]
    needles["hex"].append(Needle(raw.hex(), 2 * k, "hex-encoded"))
    needles["base64"] += [Needle(core, 4 * ((k - 2) // 3), "base64-encoded")
                          for core in _aligned(raw, base64.b64encode, 3, 4)]
    return needles


_JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.([\w-]{16,})")


def secret_units(value: str) -> list[str]:
    """The parts of a secret whose runs are searched for. A JWT's header and claims are shared
    with every token of its issuer (a run of them is no leak); its signature is what is secret."""
    value = (value or "").strip()
    units = [value, *_lines(value), *_json_tokens(value)]
    units = [jwt.group(1) if (jwt := _JWT.fullmatch(unit)) else unit for unit in units]
    return [unit for unit in units if _random_looking(unit)]
