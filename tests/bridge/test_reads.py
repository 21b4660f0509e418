"""The bridge's read tools (bot/bridge/reads.py): read_file, list_files and search stay inside the
worktree (no `..`, no absolute path, no symlink followed out, never `.git`), are capped, and every
call is an enforced event. Driven over real MCP HTTP through a live bridge where it matters."""
from __future__ import annotations

import json
import os

import pytest

from bot.bridge import reads
from bot.bridge.admission import Admission, Refusal
from bot.bridge.server import BridgeServer
from bot.bridge.tools import ToolFailure
from bot.intake.grammar import Command
from bot.intake.spec import JobSpec
from tests.fakes.thread import quiet_thread

from .conftest import call

SECRET = "sk-outside-SECRET-4242"


@pytest.fixture
def outside(tmp_path):
    """A host folder beside the worktree holding a secret, as the CLI home or /etc would."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(f"KEY={SECRET}\n")
    return folder


def refused(policy: Admission, tool, **args) -> str:
    with pytest.raises(Refusal) as caught:
        tool(policy, args)
    return caught.value.code


async def test_read_file_returns_a_worktree_file(bridge):
    """A read inside the worktree returns the file's content to the model."""
    text, is_error = await call(bridge, "read_file", path="app.py")
    assert not is_error and text == "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a - b\n"


async def test_read_is_recorded_as_an_enforced_call(bridge, recorder, run_id):
    """Each read is one enforced tool_call event naming the path, like the other bridge tools."""
    await call(bridge, "read_file", path="README.md")
    await call(bridge, "read_file", path="/proc/self/environ")
    events = [(e["tier"], e["tool"], e["outcome"], json.loads(e["raw"]).get("path"))
              for e in recorder.events(run_id)]
    assert events == [("enforced", "read_file", "ok", "README.md"),
                      ("enforced", "read_file", "refused:outside", "/proc/self/environ")]


async def test_read_of_proc_self_environ_is_refused(bridge):
    """The anchor's leak: /proc/self/environ is an absolute path outside the repository."""
    text, is_error = await call(bridge, "read_file", path="/proc/self/environ")
    assert is_error and text.startswith("refused:") and "PATH=" not in text


def test_read_climbing_out_with_dotdot_is_refused(worktree, outside):
    """`../outside/secret.txt` names a file beside the worktree: refused, not read."""
    assert refused(Admission(worktree), reads.read_file, path="../outside/secret.txt") == "outside"


def test_read_of_an_absolute_host_path_is_refused(worktree, outside):
    """An absolute path (here the host path of a file outside) is refused."""
    assert refused(Admission(worktree), reads.read_file, path=str(outside / "secret.txt")) == "outside"


def test_read_of_the_cli_home_is_refused(worktree, tmp_path):
    """The CLI home holds its credentials: its absolute path is outside the repository."""
    auth = tmp_path / "home" / ".codex" / "auth.json"
    auth.parent.mkdir(parents=True)
    auth.write_text(json.dumps({"OPENAI_API_KEY": SECRET}))
    assert refused(Admission(worktree), reads.read_file, path=str(auth)) == "outside"


def test_read_through_a_symlink_to_a_file_outside_is_refused(worktree, outside):
    """A repository symlink to a host file is reported as a link, never followed."""
    os.symlink(outside / "secret.txt", worktree / "notes.txt")
    os.symlink("/proc/self/environ", worktree / "env")
    policy = Admission(worktree)
    assert refused(policy, reads.read_file, path="notes.txt") == "symlink"
    assert refused(policy, reads.read_file, path="env") == "symlink"


def test_read_through_a_symlinked_folder_is_refused(worktree, outside):
    """A folder symlink on the way (`docs -> /host/folder`) is not walked through."""
    os.symlink(outside, worktree / "docs")
    assert refused(Admission(worktree), reads.read_file, path="docs/secret.txt") == "symlink"


@pytest.mark.parametrize("path", [".git/config", ".git/HEAD", ".GIT/config", "sub/.git/config"])
def test_git_metadata_is_refused(worktree, path):
    """`.git` in any spelling, at any depth, is not readable through the bridge."""
    assert refused(Admission(worktree), reads.read_file, path=path) == "git_dir"


def test_protected_path_may_be_read(worktree):
    """Protection is about changes: a workflow file can be read, not written."""
    (worktree / ".github" / "workflows").mkdir(parents=True)
    (worktree / ".github" / "workflows" / "ci.yml").write_text("on: push\n")
    text, _ = reads.read_file(Admission(worktree), {"path": ".github/workflows/ci.yml"})
    assert text == "on: push\n"


def test_read_with_the_mount_path_prefix_reads_the_worktree_file(worktree):
    """The agent sees the worktree at /workspace: `/workspace/app.py` is app.py."""
    text, _ = reads.read_file(Admission(worktree), {"path": "/workspace/README.md"})
    assert text == "# demo\n"


def test_offset_and_limit_select_lines_and_say_how_to_read_on(worktree):
    """offset is 1-based, limit counts lines; a partial read names the next offset."""
    (worktree / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    text, detail = reads.read_file(Admission(worktree), {"path": "n.txt", "offset": 3, "limit": 2})
    assert text.startswith("line 3\nline 4\n") and "offset=5" in text and detail["lines"] == [3, 4]


def test_read_is_capped_in_bytes_per_call(worktree):
    """A 300 kB file comes back in pieces of at most READ_MAX_BYTES, with where to go on."""
    (worktree / "big.txt").write_text("".join(f"{i:09d}\n" for i in range(30_000)))
    text, detail = reads.read_file(Admission(worktree), {"path": "big.txt"})
    body, _, note = text.rpartition("\n[")
    assert len(body.encode()) <= reads.READ_MAX_BYTES and "more follows" in note
    assert f"offset={detail['lines'][1] + 1}" in note


def test_binary_file_is_reported_not_shown(worktree):
    """A file with NUL bytes is named as binary with its size; its bytes never reach the model."""
    (worktree / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 100)
    text, detail = reads.read_file(Admission(worktree), {"path": "logo.png"})
    assert "binary file (116 bytes)" in text and "PNG" not in text and detail["binary"]


def test_reading_a_folder_or_a_missing_file_is_a_plain_failure(worktree):
    """Not refusals: the model is told what is there instead."""
    (worktree / "src").mkdir()
    with pytest.raises(ToolFailure, match="list_files"):
        reads.read_file(Admission(worktree), {"path": "src"})
    with pytest.raises(ToolFailure, match="does not exist"):
        reads.read_file(Admission(worktree), {"path": "nope.py"})


def test_fifo_is_not_opened(worktree):
    """A pipe left in the worktree (by `run`) would block a reader: it is refused unopened."""
    os.mkfifo(worktree / "pipe")
    with pytest.raises(ToolFailure, match="not a regular file"):
        reads.read_file(Admission(worktree), {"path": "pipe"})


# -- list_files --------------------------------------------------------------------------------

def test_listing_skips_git_and_shows_links_without_following(worktree, outside):
    """The root's entries: `.git` left out, a link shown with its target, its content unlisted."""
    os.symlink(outside, worktree / "linked")
    (worktree / "src").mkdir()
    (worktree / "src" / "m.py").write_text("x = 1\n")
    text, detail = reads.list_files(Admission(worktree), {"recursive": True})
    assert text.splitlines() == ["README.md", "app.py", f"linked -> {outside} (symbolic link, not followed)",
                                 "src/", "src/m.py"]
    assert detail == {"path": ".", "entries": 5, "truncated": False}


def test_listing_without_recursive_stays_in_the_folder(worktree):
    """Without recursive, only the folder's own entries."""
    (worktree / "src" / "deep").mkdir(parents=True)
    text, _ = reads.list_files(Admission(worktree), {"path": "src"})
    assert text == "src/deep/"


def test_listing_is_capped_in_entries(worktree):
    """More entries than LIST_MAX_ENTRIES: the listing stops there and says so."""
    many = worktree / "many"
    many.mkdir()
    for i in range(reads.LIST_MAX_ENTRIES + 5):
        (many / f"f{i:05d}").touch()
    text, detail = reads.list_files(Admission(worktree), {"path": "many"})
    assert detail["entries"] == reads.LIST_MAX_ENTRIES and detail["truncated"]
    assert f"more than {reads.LIST_MAX_ENTRIES} entries" in text


def test_listing_is_capped_in_time(worktree, monkeypatch):
    """Past the time limit a listing stops and says so (the limit is set below zero here)."""
    monkeypatch.setattr(reads, "TIME_LIMIT_S", -1.0)
    text, detail = reads.list_files(Admission(worktree), {"recursive": True})
    assert detail["truncated"] and "time limit" in text


def test_listing_a_symlinked_folder_is_refused(worktree, outside):
    """list_files on a link to a host folder: refused, the folder is not listed."""
    os.symlink(outside, worktree / "linked")
    assert refused(Admission(worktree), reads.list_files, path="linked") == "symlink"


# -- search ------------------------------------------------------------------------------------

async def test_search_returns_path_line_and_text(worktree):
    """Each matching line as path:line:text, paths from the repository root."""
    text, detail = await reads.search(Admission(worktree), {"pattern": r"return a [-+] b"})
    assert text.splitlines()[:2] == ["app.py:2:    return a - b", "app.py:6:    return a - b"]
    assert detail["matches"] == 2


async def test_search_of_one_folder_or_file_with_a_glob(worktree):
    """path narrows to a folder or a file, glob to file names."""
    (worktree / "src").mkdir()
    (worktree / "src" / "a.py").write_text("needle\n")
    (worktree / "src" / "a.txt").write_text("needle\n")
    policy = Admission(worktree)
    folder, _ = await reads.search(policy, {"pattern": "needle", "path": "src", "glob": "*.py"})
    single, _ = await reads.search(policy, {"pattern": "needle", "path": "src/a.txt"})
    assert folder.splitlines()[0] == "src/a.py:1:needle" and "a.txt" not in folder
    assert single.splitlines()[0] == "src/a.txt:1:needle"


async def test_search_does_not_follow_a_symlink_out(worktree, outside):
    """A link to a host folder or file is not searched through."""
    os.symlink(outside, worktree / "linked")
    os.symlink(outside / "secret.txt", worktree / "secret.txt")
    text, detail = await reads.search(Admission(worktree), {"pattern": "SECRET"})
    assert detail["matches"] == 0 and SECRET not in text


async def test_search_never_reads_git(worktree):
    """Whatever `.git` holds, search does not look there."""
    (worktree / ".git" / "description").write_text("needle in git\n")
    text, detail = await reads.search(Admission(worktree), {"pattern": "needle"})
    assert detail["matches"] == 0 and "needle in git" not in text


async def test_search_of_a_symlinked_path_is_refused(worktree, outside):
    """search with path naming a link to a host folder: refused."""
    os.symlink(outside, worktree / "linked")
    with pytest.raises(Refusal) as caught:
        await reads.search(Admission(worktree), {"pattern": "KEY", "path": "linked"})
    assert caught.value.code == "symlink"


async def test_search_is_capped_in_matches(worktree):
    """More matching lines than SEARCH_MAX_MATCHES: it stops there and says so."""
    for i in range(10):
        (worktree / f"m{i}.txt").write_text("hit\n" * 40)
    text, detail = await reads.search(Admission(worktree), {"pattern": "hit"})
    assert detail["matches"] == reads.SEARCH_MAX_MATCHES and detail["truncated"]
    assert f"stopped at {reads.SEARCH_MAX_MATCHES} matches" in text


async def test_invalid_regex_is_searched_as_literal_text(worktree):
    """`add(a` is not a valid regex: it is searched literally and the model is told."""
    text, detail = await reads.search(Admission(worktree), {"pattern": "add(a"})
    assert text.startswith("app.py:1:def add(a, b):") and detail["literal"] and "literal text" in text


async def test_backtracking_pattern_cannot_hang_the_bot(worktree):
    """`(a+)+$` against a long run of a's (catastrophic for a backtracking engine) completes."""
    (worktree / "a.txt").write_text("a" * 5000 + "!\n")
    text, detail = await reads.search(Admission(worktree), {"pattern": "(a+)+$"})
    assert detail["matches"] == 0 and not detail["truncated"]


async def test_bad_argument_types_are_refused(bridge):
    """offset must be a number and recursive a boolean (schema check before any read)."""
    text, is_error = await call(bridge, "read_file", path="app.py", offset="3")
    listed, list_error = await call(bridge, "list_files", recursive="yes")
    assert is_error and "offset must be" in text
    assert list_error and "recursive must be a boolean" in listed


async def test_bridge_lists_the_read_tools(worktree, recorder, run_id, tmp_path):
    """read_file, list_files and search are among the tools the CLI is given."""
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id,
                            scratch_root=tmp_path / "s") as bridge:
        assert {"read_file", "list_files", "search"} <= set(bridge.bridge_for().tools)


def test_standing_instruction_names_the_read_tools():
    """Codex and OpenCode have no native read in strict mode: the instruction says how to read."""
    from bot.config import Settings
    from bot.job.conversations import standing_instruction
    from bot.job.modes import GitHubMode
    from bot.job.pipeline import Job
    ctx = Job(spec=JobSpec(repo="o/r", number=1, author="alice", command=Command(kind="run", request="fix")),
              conversation="o/r#1", surface=None,
              mode=GitHubMode(quiet_thread()), settings=Settings({}))
    assert all(tool in standing_instruction(ctx) for tool in ("read_file", "list_files", "search"))


@pytest.mark.parametrize(("tool", "args", "said"), [
    ("read_file", {"path": "a.txt", "limit": 2.5}, "limit must be an integer"),
    ("read_file", {"path": "a.txt", "offset": True}, "offset must be an integer"),
    ("list_files", {"recursive": "yes"}, "recursive must be a boolean"),
    ("save_file", {"path": "a.txt", "content": 3}, "content must be a string"),
    ("run", {"command": "true", "timeout_s": "10"}, "timeout_s must be a number"),
])
def test_arguments_are_checked_against_the_tools_json_schema(tool, args, said):
    """Every JSON Schema type of the tools is checked (bools are not numbers, 2.5 is no integer)."""
    from bot.bridge.admission import Refusal
    from bot.bridge.catalog import check_arguments
    with pytest.raises(Refusal) as refused:
        check_arguments(tool, args)
    assert refused.value.code == "bad_args" and said in str(refused.value)


# -- the thread's attachments: a read-only folder outside the worktree, by its absolute path ------

@pytest.fixture
def attachments(tmp_path):
    """The attachments folder as the bot fills it (bound into the sandbox at this same path)."""
    folder = tmp_path / "data" / "attachments" / "octo-repo-12"
    folder.mkdir(parents=True)
    (folder / "01-trace.log").write_text("Traceback: boom at line 3\n")
    (folder / "02-screenshot.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + b"\0" * 100)
    return folder


def read_attached(worktree, folder, path: str) -> tuple[str, dict]:
    return reads.read_file(Admission(worktree), {"path": path}, (str(folder),))


def test_read_of_an_attached_text_file_by_its_listed_path(worktree, attachments):
    """The path the prompt lists (absolute, in the attachments folder) reads the file."""
    text, detail = read_attached(worktree, attachments, str(attachments / "01-trace.log"))
    assert text == "Traceback: boom at line 3\n" and detail["path"] == str(attachments / "01-trace.log")


def test_attached_image_is_reported_as_binary(worktree, attachments):
    """An attached image stays binary to read_file: named with its size, never shown."""
    text, detail = read_attached(worktree, attachments, str(attachments / "02-screenshot.png"))
    assert "binary file (116 bytes)" in text and "PNG" not in text and detail["binary"]


def test_read_climbing_out_of_the_attachments_folder_is_refused(worktree, attachments, outside):
    """`..` out of the attachments folder falls to the worktree's rules: an outside path, refused."""
    climb = f"{attachments}/../../../outside/secret.txt"
    assert refused(Admission(worktree), lambda p, a: reads.read_file(p, a, (str(attachments),)),
                   path=climb) == "outside"


def test_symlink_in_the_attachments_folder_is_not_followed(worktree, attachments, outside):
    """The attachments folder is walked like the worktree: a link there is reported, not read."""
    os.symlink(outside / "secret.txt", attachments / "03-link.txt")
    with pytest.raises(Refusal) as caught:
        read_attached(worktree, attachments, str(attachments / "03-link.txt"))
    assert caught.value.code == "symlink" and SECRET not in caught.value.message


def test_folder_beside_the_attachments_folder_is_refused(worktree, attachments, outside):
    """A sibling whose name starts like the folder (`octo-repo-12x`) is outside it."""
    sibling = attachments.parent / (attachments.name + "x")
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET)
    assert refused(Admission(worktree), lambda p, a: reads.read_file(p, a, (str(attachments),)),
                   path=str(sibling / "secret.txt")) == "outside"


async def test_bridge_reads_an_attachment_over_mcp(worktree, recorder, run_id, tmp_path, attachments):
    """A bridge given the attachments folder serves read_file of it; /proc/self/environ stays refused."""
    async with BridgeServer(worktree, Admission(worktree), recorder, run_id, scratch_root=tmp_path / "s",
                            read_dirs=(str(attachments),)) as server:
        text, is_error = await call(server, "read_file", path=str(attachments / "01-trace.log"))
        environ, refused_environ = await call(server, "read_file", path="/proc/self/environ")
    assert not is_error and "boom at line 3" in text
    assert refused_environ and environ.startswith("refused:")
