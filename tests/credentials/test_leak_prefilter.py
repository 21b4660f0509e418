"""The leak scanner's pre-filter for short texts (adapters/masking/leaks.py `_Scanner.clean`): a text
it lets through unmasked is one every view would have left unmasked too. The oracle is the scan
without the pre-filter (`mask_every_view`); the texts carry secrets, parts of them and token
shapes in every encoding the scanner knows, at every alignment, beside near misses."""
from __future__ import annotations

import base64
import html
import json
import re
import string
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.masking import leaks, shapes
from adapters.masking.leaks import SHORT, mask, mask_every_view

KEY_CHARS = string.ascii_letters + string.digits
key_like = st.text(KEY_CHARS, min_size=10, max_size=44).filter(
    lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s))
symbolic = st.text(KEY_CHARS + "+/=-_.:@ ", min_size=6, max_size=30)
token_shape = st.one_of(
    st.tuples(st.sampled_from(["ghp_", "ghs_", "gho_", "github_pat_", "sk-ant-", "ya29."]),
              st.text(KEY_CHARS + "_", min_size=20, max_size=40)).map("".join),
    st.text(KEY_CHARS, min_size=32, max_size=40).map(lambda s: "sk-" + s),
    st.text(KEY_CHARS, min_size=35, max_size=35).map(lambda s: "AIza" + s),
    st.text(KEY_CHARS, min_size=30, max_size=34).map(lambda s: "1//0" + s))
secret = st.one_of(key_like, symbolic, token_shape,
                   st.tuples(key_like, key_like).map(lambda pair: "\n".join(pair)),
                   key_like.map(lambda s: json.dumps({"access_token": s + "abcdefgh"})))


def _b64(data: bytes, shift: int, urlsafe: bool) -> str:
    encoded = base64.b64encode(b"\0x?"[:shift] + data).decode()
    return encoded.translate(str.maketrans("+/", "-_")) if urlsafe else encoded


def _b32(data: bytes, shift: int) -> str:
    return base64.b32encode(b"AB\0cd"[:shift] + data).decode().rstrip("=")


def _invisible(value: str) -> str:
    return "\u200b".join(value)


ENCODINGS = {
    "verbatim": lambda v, n: v,
    "base64": lambda v, n: _b64(v.encode(), n % 3, n % 2 == 1),
    "base64 wrapped": lambda v, n: "\n".join(re.findall(f".{{1,{8 + n}}}", _b64(v.encode(), n % 3, False))),
    "base32": lambda v, n: _b32(v.encode(), n % 5),
    "base32 lower": lambda v, n: _b32(v.encode(), n % 5).lower(),
    "hex": lambda v, n: v.encode().hex(),
    "HEX": lambda v, n: "0x" + v.encode().hex().upper(),
    "URL-encoded": lambda v, n: quote(v, safe=""),
    "percent every byte": lambda v, n: "".join(f"%{b:02X}" for b in v.encode()),
    "HTML entities": lambda v, n: "".join(f"&#{ord(c)};" for c in v),
    "JSON-escaped": lambda v, n: json.dumps(v)[1:-1],
    "reversed": lambda v, n: v[::-1],
    "invisible inside": lambda v, n: _invisible(v),
    "split across lines": lambda v, n: v[:len(v) // 2] + "\n" + v[len(v) // 2:],
    "spaced": lambda v, n: " ".join(v),
    "full-width": lambda v, n: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in v),
}


@st.composite
def carried(draw, secrets: list[str]) -> str:
    """Part of a secret (or a whole one, or a token shape nobody was told) in some encoding."""
    value = draw(st.sampled_from(secrets)) if secrets and draw(st.booleans()) else draw(token_shape)
    start = draw(st.integers(0, max(0, len(value) - 1)))
    end = draw(st.integers(start + 1, len(value)))
    part = value if draw(st.booleans()) else value[start:end]
    how = draw(st.sampled_from(sorted(ENCODINGS)))
    return ENCODINGS[how](part, draw(st.integers(0, 5)))


filler = st.one_of(
    st.text(string.printable, max_size=40),
    st.integers(0, 10**6).map(lambda n: json.dumps({"type": "turn.progress", "n": n})),
    st.binary(max_size=30).map(lambda b: base64.b64encode(b).decode()),
    st.binary(max_size=30).map(lambda b: b.hex()),
    st.binary(min_size=10, max_size=30).map(lambda b: base64.b32encode(b).decode()),
    st.sampled_from(["sk-", "ghp_", "AIza", "ya29.", "1//0", "%41", "&amp;", "\\u0041", "0x", "é", "\u200b"]))


@st.composite
def texts_and_secrets(draw) -> tuple[str, list[str]]:
    secrets = draw(st.lists(secret, max_size=3))
    pieces = draw(st.lists(st.one_of(filler, carried(secrets)), min_size=1, max_size=4))
    joiner = draw(st.sampled_from(["", " ", "\n", '","', ":"]))
    return joiner.join(pieces)[:SHORT], secrets


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_and_secrets())
def test_the_pre_filter_masks_exactly_what_every_view_masks(case):
    text, secrets = case
    assert mask(text, secrets) == mask_every_view(text, secrets)


@st.composite
def one_encoded_part(draw) -> tuple[str, list[str]]:
    """A text that is one encoded secret, part of one or token shape and little else: the pre-filter's
    gates on the whole text's length (a view too short to decode into a token) decide there."""
    secrets = draw(st.lists(secret, min_size=1, max_size=2))
    edge = draw(st.sampled_from(["", " ", "x", '"', "0", "\n"]))
    return edge + draw(carried(secrets)) + edge, secrets


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(one_encoded_part())
def test_the_pre_filter_masks_exactly_what_every_view_masks_in_one_encoded_part(case):
    text, secrets = case
    assert mask(text, secrets) == mask_every_view(text, secrets)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts_and_secrets())
def test_a_text_the_pre_filter_passes_has_nothing_for_any_view_to_find(case):
    """Stronger than equal outputs: nothing found at all, not even a finding masking nothing new."""
    text, secrets = case
    scanner = leaks._scanner(tuple(secrets))
    if scanner.clean(text):
        assert scanner.find(text) == []
        assert leaks._escaped_blocks(text) == []


def test_a_flooding_clis_progress_line_is_passed_by_the_pre_filter():
    """The shape the pre-filter is for: a short JSON line with no secret in it."""
    scanner = leaks._scanner(("ghs_" + "Ab3" * 12, "sk-" + "x9Y" * 14))
    assert scanner.clean('{"type":"turn.progress","n":1234}')


def test_the_shortest_token_shapes_in_base64_and_hex_are_masked_as_every_view_masks_them():
    """At the pre-filter's length gates: token shapes of the fewest characters nobody was told,
    base64- and hex-encoded at each alignment, masked as the scan without the pre-filter masks them."""
    for extra in range(4):
        token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0kL"[:20 + extra]
        for shift in range(3):
            for text in (_b64(token.encode(), shift, False), (b"\0" * shift + token.encode()).hex()):
                assert mask(text, []) == mask_every_view(text, [])
        assert leaks.MASK in mask(_b64(token.encode(), 0, False), [])


def test_a_secrets_part_base32_encoded_near_the_decoding_gate_is_masked_as_every_view_masks_it():
    """A run of the base32 alphabet too short for the base64 view's gate but long enough to be
    decoded: only the pre-filter's base32 test stops it, and the scan without it masks it."""
    key = "Zq8vN3kR7tY2mP5wL9cB"
    for length in range(10, len(key) + 1):
        for shift in range(5):
            for text in (_b32(key[:length].encode(), shift), _b32(key[-length:].encode(), shift).lower()):
                assert mask(text, [key]) == mask_every_view(text, [key])
    assert mask(_b32(key[:15].encode(), 0), [key]) == leaks.MASK


def test_no_token_shape_is_shorter_than_the_pre_filters_bound():
    """SHORTEST_SHAPE is what the pre-filter's decoding gates rest on: no shape matches fewer characters."""
    widths = [re._parser.parse(pattern).getwidth()[0] for pattern in shapes.SHAPES.values()]  # type: ignore[attr-defined]
    assert min(widths) == shapes.SHORTEST_SHAPE


def test_an_html_escaped_secret_in_a_short_line_is_still_masked():
    key = "Zq8vN3kR7tY2mP5wL9cB"
    assert key not in html.unescape(mask(f"key={''.join(f'&#{ord(c)};' for c in key)}", [key]))
