"""Escape suite (threat model classes 3 and 4): what the bot refuses to commit when the agent spells
a path or a symlink's target so that the commit-time checks misread it."""
from __future__ import annotations

import os

import pytest

from bot.workspace import effects

from .conftest import sh_git
from .test_effects import ask, edit


def pushed_nothing(remote, widget) -> bool:
    return sh_git("branch", "--list", "bot/*", cwd=remote.path(widget)) == ""


# -- class 3: control, invisible and bidirectional characters --------------------------------

async def test_workflow_with_a_newline_in_its_name_is_not_committed(remote, widget, github, api, token):
    """The reported payload: `.github/workflows/pwn\\n.yml` is refused and nothing is pushed."""
    wt = await edit(widget, 1, {".github/workflows/pwn\n.yml": "on: pull_request_target\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and out.commit_sha is None and pushed_nothing(remote, widget)


_UNSAFE = {"ESC": "\x1b", "DEL": "\x7f", "C1 NEL": "\x85", "RLO": "\u202e", "ZWSP": "\u200b",
           "LS": "\u2028", "BOM": "\ufeff"}


@pytest.mark.parametrize("char", _UNSAFE.values(), ids=_UNSAFE.keys())
async def test_changed_path_with_a_control_or_format_character_is_not_committed(
        remote, widget, github, api, token, char):
    """Any changed path holding a C0/C1/DEL, bidi, zero-width or separator character is refused."""
    wt = await edit(widget, 1, {f"src/a{char}b.py": "x = 1\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and pushed_nothing(remote, widget)


async def test_refusal_shows_an_unsafe_path_escaped(remote, widget, github, api, token):
    """The answer names the path with the character escaped: a raw RLO would reorder the comment."""
    wt = await edit(widget, 1, {"src/\u202egnp.py": "x = 1\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert "\u202e" not in out.message and "src/\\u202egnp.py" in out.message


@pytest.mark.parametrize("path", [".GITHUB/workflows/x.yml", ".github/Workflows/x.yml",
                                  ".github./workflows/x.yml", ".github /workflows/x.yml",
                                  ".github/workflows ./x.yml"])
async def test_protected_folder_in_another_spelling_is_refused(remote, widget, github, api, token, path):
    """A case-insensitive or NTFS checkout opens these as `.github/workflows/`: protected."""
    wt = await edit(widget, 1, {path: "on: pull_request_target\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and ".github/workflows/**" in out.message
    assert pushed_nothing(remote, widget)


# -- class 4: git metadata in other spellings ------------------------------------------------

_LINK_TARGETS = [".GIT/config", ".git./config", ".git /config", "GIT~1/config", "git~2/config",
                 ".git::$INDEX_ALLOCATION/config", ".g\u200cit/config", "sub/../.Git/config",
                 "..\\..\\secrets", "C:\\Users\\runner\\.ssh\\id_rsa", "\\\\host\\share\\x"]


@pytest.mark.parametrize("target", _LINK_TARGETS)
async def test_symlink_to_git_metadata_in_another_spelling_is_not_committed(
        remote, widget, github, api, token, target):
    """A link a case-insensitive, NTFS or HFS+ checkout would follow into `.git` (or out of the
    repository with backslashes, a drive or a UNC name) is refused; nothing is pushed."""
    wt = await edit(widget, 1, {}, token)
    os.symlink(target, wt.path / "config-link")
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`config-link`" in out.message
    assert pushed_nothing(remote, widget)


async def test_path_that_is_git_metadata_in_a_short_name_is_not_committed(remote, widget, github, api,
                                                                          token):
    """`GIT~2/config` (git itself only refuses `git~1`) is `.git` on an NTFS checkout."""
    wt = await edit(widget, 1, {"GIT~2/config": "[core]\n\tfsmonitor = ./pwn\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "refused" and "`GIT~2/config`" in out.message
    assert pushed_nothing(remote, widget)


async def test_ordinary_names_with_dots_and_tildes_still_land(remote, widget, github, api, token):
    """The rules refuse spellings of `.git`, not names merely like them."""
    wt = await edit(widget, 1, {".gitignore": "*.pyc\n", "docs/git~notes.md": "x\n",
                                "docs/v1.2.txt": "y\n"}, token)
    out = await effects.apply(wt, ask(1), api, token)
    assert out.kind == "pull_request"
