"""Secrets never leave in posted text."""
from __future__ import annotations

import base64

from bot.redact import MASK, redact


def test_secret_value_is_masked():
    """An env value appearing in the answer is replaced by the mask."""
    assert redact("key is sk-live-abcdef123", ["sk-live-abcdef123"]) == f"key is {MASK}"


def test_base64_form_of_a_secret_is_masked():
    """A secret leaked base64-encoded is masked too."""
    encoded = base64.b64encode(b"hunter2-secret-value").decode()
    assert "hunter2" not in redact(f"x {encoded} y", ["hunter2-secret-value"]).replace(MASK, "")
    assert MASK in redact(f"x {encoded} y", ["hunter2-secret-value"])


def test_installation_token_shape_is_masked_without_being_told():
    """A GitHub token shape is masked even when its value was not passed."""
    assert "ghs_" not in redact("token ghs_" + "a" * 36, [])


def test_short_values_are_left_alone():
    """Very short env values would mask ordinary words; they are skipped."""
    assert redact("the cat", ["cat"]) == "the cat"
