"""Encoded forms whose last block is partial: the scanner decodes a base64 or base32 run to its last
whole byte, not only to its last whole block, and decodes base32 runs as short as the shortest run
of a secret it must find. Both gaps were found by the pre-filter's property tests
(tests/credentials/test_leak_prefilter.py): the scan without the pre-filter missed them too."""
from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.masking.leaks import mask, mask_every_view, scan

SECRET_40 = "Zq8vN3kR7tY2mP5wL9cB4dF6hJ1sA0eUxQ3rT8yW"  # a secret of no known shape: least run 16
SECRET_12 = "fq3Kx7Lm2Pq9"  # a short secret: least run 10
TOKEN = "ghp_" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn"  # the shortest shape a ghp_ token can have: 24 characters


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode().rstrip("=")


def _b32(data: bytes) -> str:
    return base64.b32encode(data).decode().rstrip("=")


def test_a_shortest_token_whose_base64_ends_in_a_partial_block_is_masked():
    encoded = _b64(b"x" + TOKEN.encode())  # 25 bytes: the last block holds one byte
    assert len(encoded) % 4 != 0
    masked = mask(f"blob {encoded} end", [])
    assert encoded[-12:] not in masked and masked.startswith("blob ")


def test_a_secrets_run_whose_base32_ends_in_a_partial_block_is_masked():
    encoded = _b32(SECRET_40[:16].encode())  # 16 bytes, the least run of this secret: 26 characters
    assert len(encoded) % 8 != 0
    assert encoded[:16] not in mask(f"k={encoded};", [SECRET_40])


def test_a_secrets_least_run_base32_encoded_into_fewer_than_24_characters_is_masked():
    encoded = _b32(SECRET_12[:10].encode())  # 10 bytes: 16 characters
    assert len(encoded) < 24
    assert encoded not in mask(f"k={encoded};", [SECRET_12])


def test_the_gate_tells_which_part_of_an_output_carries_the_short_base32_run():
    encoded = _b32(SECRET_12.encode())
    leaks = scan({"commit message": f"fix {encoded}"}, [SECRET_12])
    assert [leak.where for leak in leaks] == ["commit message"]


def test_a_long_identifier_of_the_base32_alphabet_is_left_alone():
    text = "def renderTrackingCommentQuicklyAndSafely(): pass"
    assert mask(text, [SECRET_12, SECRET_40]) == text


@settings(max_examples=200, deadline=None)
@given(secret=st.sampled_from([SECRET_12, SECRET_40]), start=st.integers(0, 30), length=st.integers(16, 40),
       before=st.binary(max_size=7), after=st.binary(max_size=7),
       encoding=st.sampled_from(["base64", "base32", "base32 lower"]))
def test_any_long_enough_run_of_a_secret_encoded_at_any_alignment_is_masked(secret, start, length, before,
                                                                            after, encoding):
    run = secret[start:start + length]
    if len(run) < min(len(secret), 16):
        return
    data = before + run.encode() + after
    encoded = {"base64": _b64, "base32": _b32, "base32 lower": lambda d: _b32(d).lower()}[encoding](data)
    masked = mask(f"v: {encoded} .", [secret])
    assert encoded not in masked
    assert mask_every_view(f"v: {encoded} .", [secret]) == masked
