"""The bridge's read tools: `read_file`, `list_files` and `search` over the worktree.

Reads are not effects, but a read is a way out: one anchor leaked its runner's API key by reading
`/proc/self/environ` through a repository symlink. So a read is admitted like a write
(`Admission.admit_read`: inside the worktree, a plain name, never `.git` in any spelling; protected
paths may be read) and then walked from a descriptor of the worktree one component at a time,
never following a symlink (a link is reported with its target, not followed) and never opening
anything but a regular file or a folder. Listings skip `.git` wherever it appears. Every read is
capped (bytes per read, entries per listing, matches per search, time per call) and says so when
it stops early; a binary file is reported as such, not shown.

Search runs the host's ripgrep (`rg`, a finite-automaton regex engine: no pattern can make it
backtrack for ever, unlike Python's `re`, which would hold the bot's whole process) over a
descriptor of the admitted folder (`/proc/self/fd/N` as its working directory, so a folder swapped
for a symlink after the walk is not followed), with no configuration and no ignore files read
(the repository wrote those), hidden files included, `.git` excluded, symlinks not followed.
Each function returns `(text for the model, detail for the record)`, like bot/bridge/tools.py.
"""
from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shutil
import stat
import time
from pathlib import Path, PurePosixPath

from bot.bridge.admission import Admission, Refusal
from bot.bridge.tools import ToolFailure
from bot.workspace import paths

READ_SCAN_BYTES = 8 << 20  # read_file looks at most this far into a file
READ_MAX_BYTES = 100_000  # returned per read_file call
READ_DEFAULT_LINES = 2000
LIST_MAX_ENTRIES = 1000
SEARCH_MAX_MATCHES = 200
SEARCH_MAX_PER_FILE = 50
SEARCH_MAX_COLUMNS = 300
SEARCH_MAX_FILESIZE = "4M"
SEARCH_OUTPUT_BYTES = 128 << 10
TIME_LIMIT_S = 15.0  # per list_files or search call
BINARY_PROBE = 8192

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


# -- walking ---------------------------------------------------------------------------------

def _link_refusal(relative: str, dir_fd: int, leaf: str) -> Refusal:
    try:
        target = os.readlink(leaf, dir_fd=dir_fd)
    except OSError:
        target = "?"
    return Refusal("symlink", f"{paths.printable(relative)!r} is a symbolic link (to "
                              f"{paths.printable(target)!r}); links are not followed. Read the path it "
                              "names instead if that is inside the repository.")


class _NotAFolder(ToolFailure):
    pass


def _open_dir(worktree: Path, relative: str) -> int:
    """A descriptor of the folder at `relative` (`.`: the worktree), reached without following
    a symlink; Refusal for a link on the way, ToolFailure when it does not exist."""
    fd = os.open(worktree, _DIR)
    done: list[str] = []
    try:
        for part in PurePosixPath(relative).parts:
            if part == ".":
                continue
            try:
                child = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                raise _walk_error(exc, "/".join(done + [part]), fd, part) from None
            os.close(fd)
            fd = child
            done.append(part)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _walk_error(exc: OSError, relative: str, dir_fd: int, leaf: str) -> Exception:
    if exc.errno == errno.ENOENT:
        return ToolFailure(f"{paths.printable(relative)} does not exist in the repository.")
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        mode = _lstat_mode(dir_fd, leaf)
        if mode is not None and stat.S_ISLNK(mode):
            return _link_refusal(relative, dir_fd, leaf)
        return _NotAFolder(f"{paths.printable(relative)} is a file, not a folder.")
    return exc


def _lstat_mode(dir_fd: int, name: str) -> int | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return None


def _open_file(worktree: Path, relative: str) -> int:
    """A descriptor of the regular file at `relative`, reached without following a symlink."""
    parent, leaf = PurePosixPath(relative).parent.as_posix(), PurePosixPath(relative).name
    dir_fd = _open_dir(worktree, parent)
    try:
        mode = _lstat_mode(dir_fd, leaf)
        if mode is None:
            raise ToolFailure(f"{paths.printable(relative)} does not exist in the repository.")
        if stat.S_ISLNK(mode):
            raise _link_refusal(relative, dir_fd, leaf)
        if stat.S_ISDIR(mode):
            raise ToolFailure(f"{paths.printable(relative)} is a folder; use list_files to see what is in it.")
        if not stat.S_ISREG(mode):
            raise ToolFailure(f"{paths.printable(relative)} is not a regular file (a pipe, socket or device).")
        try:
            fd = os.open(leaf, _FILE, dir_fd=dir_fd)
        except OSError as exc:
            raise _walk_error(exc, relative, dir_fd, leaf) from None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped between the look and the open
        os.close(fd)
        raise ToolFailure(f"{paths.printable(relative)} changed while it was being read; try again.")
    return fd


# -- read_file -------------------------------------------------------------------------------

def _positive(args: dict, name: str, default: int) -> int:
    value = args.get(name, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise Refusal("bad_args", f"{name} must be a whole number of at least 1.")
    return value


def read_file(policy: Admission, args: dict, read_dirs: tuple[str, ...] = ()) -> tuple[str, dict]:
    """Lines `offset`.. (1-based) of a text file, at most `limit` lines and READ_MAX_BYTES: a file
    of the worktree, or one in a `read_dirs` folder (the thread's attachments) named by its
    absolute path, walked from that folder the same way."""
    root: str | Path
    if (attached := _in_read_dir(args["path"], read_dirs)) is not None:
        root, relative = attached
        shown = str(PurePosixPath(root) / relative)
    else:
        root, relative = policy.worktree, policy.admit_read(args["path"])
        shown = relative
    if relative == ".":
        raise ToolFailure("the repository root is a folder; use list_files to see what is in it.")
    offset = _positive(args, "offset", 1)
    limit = _positive(args, "limit", READ_DEFAULT_LINES)
    with os.fdopen(_open_file(Path(root), relative), "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        data = handle.read(READ_SCAN_BYTES)
    return _text_of(shown, data, size, offset, limit)


def _in_read_dir(requested: object, read_dirs: tuple[str, ...]) -> tuple[str, str] | None:
    """(folder, path inside it) when `requested` is an absolute path under one of `read_dirs`,
    spelled plainly (no `.` or `..`, no control characters); else None (the worktree's rules)."""
    if not isinstance(requested, str) or not requested.startswith("/") or paths.forbidden_character(requested):
        return None
    parts = requested.split("/")[1:]
    if any(part in ("", ".", "..") for part in parts) or paths.ambiguous_component(requested):
        return None
    for folder in read_dirs:
        inside = PurePosixPath(folder).parts[1:]
        if tuple(parts[:len(inside)]) == inside and len(parts) > len(inside):
            return folder, "/".join(parts[len(inside):])
    return None


def _text_of(relative: str, data: bytes, size: int, offset: int, limit: int) -> tuple[str, dict]:
    detail = {"path": relative, "size": size}
    if b"\0" in data[:BINARY_PROBE]:
        return f"{relative} is a binary file ({size} bytes); its content is not shown.", detail | {"binary": True}
    lines = data.splitlines(keepends=True)
    if size > len(data) and lines and not lines[-1].endswith(b"\n"):
        lines.pop()  # a line the scan cut in the middle
    if not lines:
        return f"{relative} is empty.", detail | {"lines": 0}
    if offset > len(lines):
        return _past_end(relative, offset, len(lines), size > len(data)), detail | {"lines": 0}
    shown, cut = _within(lines[offset - 1:offset - 1 + limit], READ_MAX_BYTES)
    last = offset + len(shown) - 1
    text = b"".join(shown).decode("utf-8", "replace")
    more = last < len(lines) or size > len(data)
    if cut or more:
        text += _read_note(relative, offset, last, cut, size > len(data) and last >= len(lines))
    return text, detail | {"lines": [offset, last], "bytes": len(text)}


def _within(lines: list[bytes], cap: int) -> tuple[list[bytes], bool]:
    """As many whole lines as fit in `cap` bytes (a first line longer than that is cut)."""
    kept: list[bytes] = []
    used = 0
    for line in lines:
        if used + len(line) > cap:
            if not kept:
                return [line[:cap]], True
            return kept, True
        kept.append(line)
        used += len(line)
    return kept, False


def _read_note(relative: str, first: int, last: int, cut: bool, past_scan: bool) -> str:
    if past_scan:
        return (f"\n[lines {first}-{last} shown; the rest of {relative} is beyond the first "
                f"{READ_SCAN_BYTES >> 20} MiB, which is all read_file reads: use search or run]")
    why = f" (at most {READ_MAX_BYTES} bytes per call)" if cut else ""
    return f"\n[lines {first}-{last} shown{why}; more follows: call read_file with offset={last + 1}]"


def _past_end(relative: str, offset: int, count: int, past_scan: bool) -> str:
    if past_scan:
        return (f"{relative} has {count} lines in its first {READ_SCAN_BYTES >> 20} MiB, which is all "
                f"read_file reads; offset {offset} is beyond that: use search or run.")
    return f"{relative} has {count} lines; offset {offset} is past its end."


# -- list_files ------------------------------------------------------------------------------

def list_files(policy: Admission, args: dict) -> tuple[str, dict]:
    """The entries of a folder (recursive: everything below it), `.git` skipped, links not
    followed; at most LIST_MAX_ENTRIES entries and TIME_LIMIT_S seconds."""
    relative = policy.admit_read(args.get("path") or ".")
    recursive = bool(args.get("recursive", False))
    fd = _open_dir(policy.worktree, relative)
    entries: list[str] = []
    deadline = time.monotonic() + TIME_LIMIT_S
    try:
        stopped = _list_into(fd, "" if relative == "." else relative + "/", recursive, entries, deadline)
    finally:
        os.close(fd)
    text = "\n".join(entries) if entries else f"{relative} is an empty folder."
    if stopped:
        text += f"\n[listing stopped: {stopped}; list a subfolder to see more]"
    return text, {"path": relative, "entries": len(entries), "truncated": bool(stopped)}


def _list_into(fd: int, prefix: str, recursive: bool, entries: list[str], deadline: float) -> str | None:
    """Append the folder's entries (paths from the repository root); the reason it stopped early."""
    with os.scandir(fd) as scan:
        children = sorted(scan, key=lambda entry: entry.name)
    for entry in children:
        if paths.is_git_name(paths.canonical_component(entry.name)):
            continue
        if len(entries) >= LIST_MAX_ENTRIES:
            return f"more than {LIST_MAX_ENTRIES} entries"
        if time.monotonic() > deadline:
            return f"the {TIME_LIMIT_S:.0f} s time limit"
        name = paths.printable(prefix + entry.name)
        mode = _lstat_mode(fd, entry.name) or 0
        if stat.S_ISDIR(mode):
            entries.append(name + "/")
            if recursive and (stopped := _list_child(fd, entry.name, prefix, entries, deadline)):
                return stopped
        elif stat.S_ISLNK(mode):
            entries.append(f"{name} -> {_target(fd, entry.name)} (symbolic link, not followed)")
        elif stat.S_ISREG(mode):
            entries.append(name)
        else:
            entries.append(f"{name} (not a regular file)")
    return None


def _list_child(fd: int, name: str, prefix: str, entries: list[str], deadline: float) -> str | None:
    try:
        child = os.open(name, _DIR, dir_fd=fd)
    except OSError:  # replaced by a link or removed since the scan: listed, not entered
        return None
    try:
        return _list_into(child, f"{prefix}{name}/", True, entries, deadline)
    finally:
        os.close(child)


def _target(fd: int, name: str) -> str:
    try:
        return paths.printable(os.readlink(name, dir_fd=fd))
    except OSError:
        return "?"


# -- search ----------------------------------------------------------------------------------

async def search(policy: Admission, args: dict) -> tuple[str, dict]:
    """Lines matching a regular expression (ripgrep syntax; an invalid one is searched as
    literal text) in the text files below `path`, optionally only files matching `glob`."""
    relative = policy.admit_read(args.get("path") or ".")
    pattern, glob = args["pattern"], args.get("glob")
    if not pattern:
        raise Refusal("bad_args", "pattern is empty; give the text or regular expression to look for.")
    rg = shutil.which("rg", path="/usr/local/bin:/usr/bin:/bin")
    if rg is None:
        raise ToolFailure("search is not available on this bot (ripgrep is not installed); use run with grep.")
    try:
        fd, folder = _open_dir(policy.worktree, relative), True
    except _NotAFolder:
        fd, folder = _open_file(policy.worktree, relative), False
    try:
        found = await _ripgrep(rg, fd, folder, pattern, glob, literal=False)
        literal = found.regex_error is not None
        if literal:
            found = await _ripgrep(rg, fd, folder, pattern, glob, literal=True)
    finally:
        os.close(fd)
    if not folder:  # rg named the file by its descriptor
        found.matches = [(relative, number, text) for _, number, text in found.matches]
    prefix = "" if relative == "." or not folder else relative + "/"
    return _search_text(found, prefix, literal), {
        "path": relative, "matches": len(found.matches), "truncated": bool(found.stopped),
        "literal": literal}


class _Found:
    def __init__(self) -> None:
        self.matches: list[tuple[str, int, str]] = []
        self.stopped: str | None = None
        self.error: str | None = None
        self.regex_error: str | None = None


async def _ripgrep(rg: str, fd: int, folder: bool, pattern: str, glob: str | None, literal: bool) -> _Found:
    """rg over the folder or file open at `fd`, named through /proc/self/fd: what was walked and
    opened is what is searched, even if a name on the way became a symlink since."""
    argv = [rg, "--no-config", "--no-ignore", "--hidden", "--no-follow", "--glob", "!.git",
            "--null", "--line-number", "--with-filename", "--no-heading", "--color", "never",
            "--sort", "path", "--max-columns", str(SEARCH_MAX_COLUMNS), "--max-columns-preview",
            "--max-count", str(SEARCH_MAX_PER_FILE), "--max-filesize", SEARCH_MAX_FILESIZE]
    if glob:
        argv += ["--glob", glob]
    argv += (["--fixed-strings"] if literal else []) + ["--regexp", pattern, "--",
                                                         "." if folder else f"/proc/self/fd/{fd}"]
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=f"/proc/self/fd/{fd}" if folder else "/", pass_fds=(fd,), env={"PATH": "/usr/bin:/bin"},
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    found = _Found()
    try:
        await asyncio.wait_for(_collect(process, found), TIME_LIMIT_S)
    except TimeoutError:
        found.stopped = f"the {TIME_LIMIT_S:.0f} s time limit"
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        assert process.stderr is not None  # PIPE
        stderr = (await process.stderr.read(4096)).decode("utf-8", "replace").strip()
        await process.wait()
    # judged by what rg said, not its exit code: a process-wide child reaper elsewhere in the bot
    # can take the status first (asyncio then reports 255)
    if stderr:  # an error, possibly beside matches (an unreadable file)
        if not found.matches and ("regex parse error" in stderr or "not allowed in a regex" in stderr):
            found.regex_error = stderr
        else:
            found.error = " ".join(stderr.split())[:300]
    return found


async def _collect(process: asyncio.subprocess.Process, found: _Found) -> None:
    """Parse `path\\0line:text\\n` records until EOF or a cap (then the process is killed)."""
    assert process.stdout is not None  # PIPE
    buffer, total = b"", 0
    while chunk := await process.stdout.read(65536):
        total += len(chunk)
        buffer += chunk
        while (nul := buffer.find(b"\0")) >= 0 and (end := buffer.find(b"\n", nul)) >= 0:
            path, record, buffer = buffer[:nul], buffer[nul + 1:end], buffer[end + 1:]
            number, _, text = record.partition(b":")
            if paths.is_git_metadata(path.decode("utf-8", "replace")):  # `.git` in another spelling
                continue
            found.matches.append((path.decode("utf-8", "replace"), int(number or 0),
                                  text.decode("utf-8", "replace")))
            if len(found.matches) >= SEARCH_MAX_MATCHES:
                found.stopped = f"{SEARCH_MAX_MATCHES} matches"
                return
        if total > SEARCH_OUTPUT_BYTES:
            found.stopped = f"{SEARCH_OUTPUT_BYTES >> 10} KiB of results"
            return


def _search_text(found: _Found, prefix: str, literal: bool) -> str:
    lines = [f"{paths.printable(prefix + path.removeprefix('./'))}:{number}:{text.rstrip(chr(13))}"
             for path, number, text in found.matches]
    text = "\n".join(lines) if lines else "no matches."
    notes = []
    if literal:
        notes.append("the pattern is not a valid regular expression, so it was searched as literal text")
    if found.stopped:
        notes.append(f"stopped at {found.stopped}; narrow the path, glob or pattern to see more")
    if found.error:
        notes.append(f"ripgrep reported: {found.error}")
    notes.append(f"binary files, files over {SEARCH_MAX_FILESIZE[:-1]} MiB and .git are not searched; "
                 f"at most {SEARCH_MAX_PER_FILE} matches per file")
    return text + "\n[" + "; ".join(notes) + "]"
