"""Threat model class 6: secrets never leave through the bot's own commits, names and comments, in
any encoding an attacker would use to slip them past a plain search.

The agent holds the provider key (or can read it back) and writes what the bot then commits and
posts; the bot scans what is about to leave for the episode's secrets and for token shapes."""
from __future__ import annotations

import base64
import io
import logging
import sys
import unicodedata

import httpx
import pytest

from bot.github import client as gh_client
from bot.record.redact import MASK, LogRedactor, masked_in_logs, redact
from bot.workspace import effects
from tests.entry_settings import current
from tests.spine.test_github_client import REPO, gh, thread  # noqa: F401  (fake GitHub for comments)
from tests.workspace.conftest import api, github, remote, sh_git, token, widget  # noqa: F401
from tests.workspace.test_effects import ask, edit

KEY = "sk-ant-api03-Zq8vN3kR7tY2mP5wL9cB4dF6hJ1sA0eUxQ3rT8yW2vK6nM4pL7cX9bH1jG5fD0sA-2xYw_9AA"
HUNTED = "fq3Kx7Lm2Pq9Rt4Vw8Yz1Bc6Df0Gh5Jk"  # a secret of no known shape: only its value finds it
TOKEN_SHAPE = "ghp_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5"


# --- redaction (comments, logs, records) --------------------------------------------------------

@pytest.mark.parametrize("case", [str.lower, str.upper], ids=["lower", "upper"])
def test_hex_encoded_secret_is_masked_in_either_case(case):
    """The secret's bytes written as hex digits, in either case, are masked."""
    text = f"config: {case(HUNTED.encode().hex())} end"
    masked = redact(text, [HUNTED])
    assert MASK in masked and case(HUNTED.encode().hex())[:16] not in masked
    assert masked.startswith("config: ") and masked.endswith(" end")


def test_base32_encoded_secret_is_masked():
    """The secret in base32 is masked."""
    encoded = base64.b32encode(HUNTED.encode()).decode()
    assert encoded[:20] not in redact(f"x {encoded} y", [HUNTED])


def test_base64_of_a_secret_wrapped_across_lines_is_masked():
    """base64 of `prefix + secret` at an odd alignment, wrapped at 16 columns, is masked."""
    encoded = base64.b64encode(b"k=" + HUNTED.encode()).decode()
    wrapped = "\n".join(encoded[i:i + 16] for i in range(0, len(encoded), 16))
    masked = redact(f"blob:\n{wrapped}\nend", [HUNTED])
    assert MASK in masked and encoded[8:24] not in masked.replace("\n", "")


def test_percent_encoding_of_every_byte_is_masked():
    """`%66%71%33…` (every byte escaped) is masked."""
    encoded = "".join(f"%{byte:02X}" for byte in HUNTED.encode())
    assert encoded[9:40] not in redact(f"GET /?k={encoded}", [HUNTED])


def test_html_entity_escaped_secret_replaces_only_its_line():
    """`&#102;&#113;…` decodes to the secret but cannot be mapped back to a region: its line is
    replaced, the other lines of the comment stay."""
    encoded = "".join(f"&#{byte};" for byte in HUNTED.encode())
    masked = redact(f"Here is the answer.\nkey: {encoded}\nThanks.", [HUNTED])
    assert masked == f"Here is the answer.\n{MASK}\nThanks."


def test_reversed_secret_is_masked():
    """The secret written backwards is masked."""
    assert HUNTED[::-1][4:20] not in redact(f"x {HUNTED[::-1]} y", [HUNTED])


def test_secret_with_invisible_characters_inserted_is_masked():
    """Zero-width spaces between the secret's characters do not hide it."""
    spaced = "\u200b".join(HUNTED)
    assert "\u200b".join(HUNTED[4:12]) not in redact(f"x {spaced} y", [HUNTED])


def test_secret_split_across_lines_is_masked():
    """The secret cut into three indented lines is masked."""
    text = f"a = (\n    '{HUNTED[:11]}'\n    '{HUNTED[11:22]}'\n    '{HUNTED[22:]}'\n)"
    masked = redact(text, [HUNTED])
    assert HUNTED[:11] not in masked and HUNTED[11:22] not in masked


def test_long_substring_of_a_secret_is_masked():
    """Sixteen characters from the middle of the key are a leak."""
    assert KEY[30:46] not in redact(f"part: {KEY[30:46]}", [KEY])


def test_token_with_any_invisible_format_character_inside_is_masked_without_being_told():
    """A GitHub token shape with any Unicode format (Cf) character inserted is still a token."""
    format_chars = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    missed = [hex(ord(c)) for c in format_chars
              if "Ab3Cd5Ef7Gh9" in redact(f"t {TOKEN_SHAPE[:9]}{c}{TOKEN_SHAPE[9:]} z", []).replace(c, "")]
    assert missed == []


def test_token_shape_in_base64_is_masked_without_being_told():
    """A GitHub token, base64-encoded after a few other bytes, is found without its value."""
    encoded = base64.b64encode(b"user:" + TOKEN_SHAPE.encode()).decode()
    assert encoded[8:] not in redact(f"Authorization: Basic {encoded}", [])


def test_log_record_with_a_hex_encoded_secret_is_masked():
    """Log redaction uses the same normaliser: the running job's key, hex-encoded, is masked."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(LogRedactor())
    logger = logging.getLogger("test.leaks.hex")
    logger.addHandler(handler)
    try:
        with masked_in_logs([KEY]):
            logger.warning("payload %s", KEY.encode().hex())
    finally:
        logger.removeHandler(handler)
    assert KEY.encode().hex()[:32] not in stream.getvalue() and MASK in stream.getvalue()


async def test_comment_sent_while_a_job_runs_is_masked_by_the_client(gh):  # noqa: F811
    """Whatever path a comment takes, the GitHub client masks the running jobs' secrets in it."""
    async with httpx.AsyncClient() as client:
        t = await thread(gh_client.TokenCache.of(current()), client)
        with masked_in_logs([KEY]):
            await t.create_comment(f"done, key reversed: {KEY[::-1]}")
    assert KEY[::-1][10:40] not in gh.comments(REPO, 1)[-1]["body"]


# --- the gate: commit, push, branch name, pull request ------------------------------------------

async def test_provider_key_saved_to_a_file_is_never_committed(remote, widget, github, api, token):  # noqa: F811
    """The original finding: the agent's key written with save_file was committed and pushed.
    Now nothing is committed, and the answer says where and how, never the value."""
    wt = await edit(widget, 1, {"src/app.py": "print('hello')\n", "notes/keep.txt": f"key={KEY}\n"}, token)
    with masked_in_logs([KEY]):
        out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "notes/keep.txt" in out.message and "secret" in out.message
    assert KEY not in out.message and KEY[20:36] not in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == "" and not github.pulls(widget)


async def test_hex_encoded_key_in_a_file_is_never_committed(remote, widget, github, api, token):  # noqa: F811
    """The key hex-encoded into a file is refused like the key itself."""
    wt = await edit(widget, 1, {"data.txt": KEY.encode().hex().upper() + "\n"}, token)
    with masked_in_logs([KEY]):
        out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "hex" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


async def test_key_in_a_file_name_is_never_committed(remote, widget, github, api, token):  # noqa: F811
    """A file named after the key would publish it in the tree: refused, and the name not repeated."""
    wt = await edit(widget, 1, {f"cache/{KEY[13:45]}.json": "{}\n"}, token)
    with masked_in_logs([KEY]):
        out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "file name" in out.message and KEY[13:45] not in out.message


async def test_token_shape_in_a_file_is_never_committed_without_being_told(remote, widget, github, api,  # noqa: F811
                                                                          token):  # noqa: F811
    """A GitHub token the bot was never told about, reversed into a file, is still refused."""
    wt = await edit(widget, 1, {"src/app.py": f"T = '{TOKEN_SHAPE[::-1]}'\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "GitHub token" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


async def test_secret_in_the_issue_title_never_names_a_branch(remote, widget, github, api, token):  # noqa: F811
    """A key pasted into the issue title would become the branch name and the PR title: refused."""
    wt = await edit(widget, 1, {"src/app.py": "print('hello')\n"}, token)
    with masked_in_logs([HUNTED]):
        out = await effects.apply(wt, ask(1, title=f"Rotate {HUNTED.lower()}"), api, token)
    assert out.kind == "refused" and "branch name" in out.message
    assert sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""
