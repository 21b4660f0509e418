"""Escape suite (threat model classes 3-5): paths a hostile agent spells so that the bridge's path
policy misreads them (control and invisible characters, other spellings of `.git` and of protected
folders), and hard links that would make a file tool write through to another file."""
from __future__ import annotations

import json
import os

import pytest

from bot.bridge import tools
from bot.bridge.admission import Admission, Refusal
from bot.bridge.server import BridgeServer
from bot.bridge.tools import sandbox_for_run
from tests.entry_settings import current

from .conftest import call

WORKFLOW = "on: push\n"


def refusal_code(policy: Admission, path: str) -> str:
    with pytest.raises(Refusal) as caught:
        policy.admit_path(path)
    return caught.value.code


@pytest.fixture
def with_workflow(worktree):
    (worktree / ".github" / "workflows").mkdir(parents=True)
    (worktree / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    return worktree


# -- class 3: control, invisible and bidirectional characters --------------------------------

_UNSAFE = {"LF": "\n", "CR": "\r", "TAB": "\t", "ESC": "\x1b", "DEL": "\x7f", "C1 NEL": "\x85",
           "C1 CSI": "\x9b", "RLO": "\u202e", "LRI": "\u2066", "ZWSP": "\u200b", "ZWJ": "\u200d",
           "BOM": "\ufeff", "soft hyphen": "\u00ad", "LS": "\u2028", "PS": "\u2029",
           "tag": "\U000e0041", "lone surrogate": "\ud800"}


@pytest.mark.parametrize("char", _UNSAFE.values(), ids=_UNSAFE.keys())
def test_path_with_a_control_or_format_character_is_refused(worktree, char):
    """A C0/C1/DEL, bidi, zero-width or separator character anywhere in a path is refused."""
    assert refusal_code(Admission(worktree), f"docs/a{char}b.md") == "bad_path"


def test_trailing_newline_is_refused_not_stripped(worktree):
    """`x.yml\\n` is not quietly read as `x.yml`: the path is refused as the agent wrote it."""
    assert refusal_code(Admission(worktree), "notes.md\n") == "bad_path"


async def test_workflow_with_a_newline_in_its_name_is_not_written(with_workflow, recorder, run_id,
                                                                  tmp_path):
    """The reported payload: save_file `.github/workflows/pwn\\n.yml` is refused, nothing lands."""
    async with BridgeServer(with_workflow, Admission(with_workflow), recorder, run_id,
                            scratch_root=tmp_path / "s") as bridge:
        text, is_error = await call(bridge, "save_file", path=".github/workflows/pwn\n.yml",
                                    content="on: pull_request_target\n")
    assert is_error and os.listdir(with_workflow / ".github" / "workflows") == ["ci.yml"]


_PROTECTED_SPELLINGS = [".GITHUB/workflows/x.yml", ".github/WORKFLOWS/x.yml", ".github./workflows/x.yml",
                        ".github /workflows/x.yml", ".github/workflows. ./x.yml",
                        ".github::$INDEX_ALLOCATION/workflows/x.yml", ".github\\workflows\\x.yml",
                        "\uff0egithub/workflows/x.yml"]


@pytest.mark.parametrize("path", _PROTECTED_SPELLINGS)
def test_protected_folder_in_another_spelling_is_protected(worktree, path):
    """What a case-insensitive or NTFS checkout would open as `.github/workflows/` is protected."""
    assert refusal_code(Admission(worktree), path) == "protected"


def test_glob_matcher_is_not_fooled_by_a_newline():
    """The matcher itself (not only the refusal in front of it) sees `pwn\\n.yml` under `**`."""
    from bot.workspace import paths
    assert paths.protected_by(".github/workflows/pwn\n.yml", (".github/workflows/**",))


# -- class 4: git metadata in other spellings ------------------------------------------------

_GIT_SPELLINGS = [".git./config", ".git /config", ".Git. . /hooks/pre-commit", "GIT~1/config",
                  "git~2/config", ".git::$INDEX_ALLOCATION/config", ".git:stream/config",
                  "vendor/.GIT./config", ".git\\config", "\uff0egit/config"]


@pytest.mark.parametrize("path", _GIT_SPELLINGS)
def test_git_metadata_in_another_spelling_is_refused(worktree, path):
    """Case-folded, trailing dots/spaces, 8.3 short names, NTFS streams: all are `.git`."""
    assert refusal_code(Admission(worktree), path) == "git_dir"


def test_git_metadata_spelled_with_an_hfs_ignorable_character_is_refused(worktree):
    """`.g\\u200cit` is `.git` on HFS+ (it ignores zero-width joiners): never admitted."""
    with pytest.raises(Refusal):
        Admission(worktree).admit_path(".g\u200cit/config")


@pytest.mark.parametrize("target", [".git.", ".git ", "GIT~1", ".git::$INDEX_ALLOCATION"])
def test_symlink_to_git_metadata_in_another_spelling_is_not_followed(worktree, target):
    """A link (made by `run`) to another spelling of `.git` is judged by where it leads."""
    (worktree / target).mkdir()
    os.symlink(target, worktree / "innocent")
    assert refusal_code(Admission(worktree), "innocent/config") == "git_dir"


# -- class 5: hard links ----------------------------------------------------------------------

async def test_save_file_through_a_hard_link_made_by_run_leaves_the_workflow_alone(
        with_workflow, recorder, run_id, tmp_path):
    """`run` links notes.txt to the workflow; save_file(notes.txt) replaces notes.txt only, and
    the record names notes.txt."""
    policy = Admission(with_workflow)
    async with BridgeServer(with_workflow, policy, recorder, run_id, scratch_root=tmp_path / "s",
                            run_sandbox=sandbox_for_run(with_workflow, policy, tier=1, host=current().sandbox_host)) as bridge:
        ran, _ = await call(bridge, "run", command="ln .github/workflows/ci.yml notes.txt")
        text, is_error = await call(bridge, "save_file", path="notes.txt", content="pwned\n")
    assert ran.startswith("exit code 0") and not is_error
    assert (with_workflow / ".github/workflows/ci.yml").read_text() == WORKFLOW
    assert (with_workflow / "notes.txt").read_text() == "pwned\n"
    recorded = json.loads(recorder.events(run_id)[-1]["raw"])
    assert (recorded["path"], recorded["hard_link_broken"]) == ("notes.txt", 1)


def test_edit_file_through_a_hard_link_leaves_the_other_name_alone(with_workflow):
    """edit_file on a hard link to the workflow rewrites the edited name, never the workflow."""
    os.link(with_workflow / ".github/workflows/ci.yml", with_workflow / "notes.txt")
    tools.edit_file(Admission(with_workflow), {"path": "notes.txt", "old_string": "push",
                                               "new_string": "pull_request_target"})
    assert (with_workflow / ".github/workflows/ci.yml").read_text() == WORKFLOW
    assert (with_workflow / "notes.txt").read_text() == "on: pull_request_target\n"


def test_written_file_has_a_single_link(with_workflow):
    """After save_file the written name is its own file (link count one), not an alias."""
    os.link(with_workflow / ".github/workflows/ci.yml", with_workflow / "notes.txt")
    tools.save_file(Admission(with_workflow), {"path": "notes.txt", "content": "mine\n"})
    assert os.stat(with_workflow / "notes.txt").st_nlink == 1
    assert os.stat(with_workflow / ".github/workflows/ci.yml").st_nlink == 1


def test_replacing_a_hard_linked_script_keeps_it_executable(worktree):
    """The replacement keeps the permission bits of the file it replaces."""
    script = worktree / "build.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    os.link(script, worktree / "alias.sh")
    tools.save_file(Admission(worktree), {"path": "build.sh", "content": "#!/bin/sh\necho hi\n"})
    assert (os.stat(script).st_mode & 0o777, (worktree / "alias.sh").read_text()) == (0o755, "#!/bin/sh\n")
