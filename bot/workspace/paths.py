"""Path rules: one home for what a repository path may be and what it really names.

An agent (or a repository) spells a path; the bot decides whether that path is git metadata or
a protected file. The decision must hold for every checkout that will ever open the path, not
only this Linux host: a case-insensitive filesystem (macOS, Windows) opens `.GITHUB/workflows`
as `.github/workflows`, NTFS drops trailing dots and spaces (`.git.`, `.git `), reads `GIT~1` as
the 8.3 short name of `.git` and `.git::$INDEX_ALLOCATION` as its directory stream, treats `\\`
as a separator, and HFS+ ignores zero-width joiners (`.g\\u200cit`). So every rule here first
refuses what no honest path holds (`forbidden_character`), then compares a *canonical* spelling
(`canonical_component`) that folds all of those together, erring on the side of "same name".

Used by the bridge's admission (bot/bridge/admission.py) and the commit-time checks
(bot/workspace/effects.py); it imports nothing from the bot, so either side may depend on it.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

# C0, DEL and C1 (Cc), bidi/zero-width/other format characters (Cf, which includes every code
# point HFS+ ignores), line and paragraph separators (Zl, Zp), and surrogates (Cs: a name that
# was not valid UTF-8, or a lone surrogate from JSON).
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_REPLACEMENT = "\ufffd"  # what a name that was not valid UTF-8 decodes to
_SHORT_NAME = re.compile(r"git~\d+|gi[0-9a-f]{4}~\d+")  # 8.3 names `.git` gets: GIT~1, GI3F2A~5
_DRIVE = re.compile(r"^[a-z]:", re.IGNORECASE)


def forbidden_character(path: str) -> str | None:
    """The first character no path may hold, as `U+XXXX` with its Unicode category, or None."""
    for char in path:
        category = unicodedata.category(char)
        if category in _FORBIDDEN_CATEGORIES or char == _REPLACEMENT:
            return f"U+{ord(char):04X} ({category})"
    return None


def printable(path: str) -> str:
    """`path` for a human to read, with every forbidden character escaped (`\\u202e`)."""
    return "".join(_escape(c) if unicodedata.category(c) in _FORBIDDEN_CATEGORIES else c for c in path)


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def ambiguous_component(path: str) -> str | None:
    """A component made only of dots and spaces other than `.` and `..` (`...`, `. .`): what a
    Windows checkout makes of it is not worth guessing. None when there is no such component."""
    for part in components(path):
        if part and set(part) <= {".", " "} and part not in (".", ".."):
            return part
    return None


def components(path: str) -> list[str]:
    """The path's components, with `\\` as a separator too (it is one on Windows)."""
    return path.replace("\\", "/").split("/")


def canonical_component(name: str) -> str:
    """What a case-insensitive, NTFS or HFS+ checkout makes of one component: compatibility
    forms folded (NFKC), format characters dropped, case folded, an NTFS stream suffix
    (`:stream:$TYPE`) cut, trailing dots and spaces stripped."""
    name = unicodedata.normalize("NFKC", name)
    name = "".join(c for c in name if unicodedata.category(c) not in _FORBIDDEN_CATEGORIES)
    name = name.casefold().split(":", 1)[0]
    return name if name in (".", "..") else name.rstrip(". ")


def canonical(path: str) -> str:
    """The canonical spelling of a repository-relative path (empty and `.` components dropped)."""
    parts = (canonical_component(part) for part in components(path))
    return "/".join(part for part in parts if part not in ("", "."))


def is_git_name(component: str) -> bool:
    """Whether one canonical component names a `.git` directory on some checkout."""
    return component == ".git" or _SHORT_NAME.fullmatch(component) is not None


def is_git_metadata(path: str) -> bool:
    """Whether any component of `path` is `.git` in any spelling a checkout would follow."""
    return any(is_git_name(canonical_component(part)) for part in components(path))


def protected_by(path: str, patterns: Iterable[str]) -> str | None:
    """The first protected pattern `path` matches in its own or its canonical spelling, or None."""
    folded = canonical(path)
    return next((pattern for pattern in patterns
                 if _matches(path, pattern) or _matches(folded, canonical_pattern(pattern))), None)


def canonical_pattern(pattern: str) -> str:
    """A protected glob folded like a path (wildcards kept), so `.GITHUB/x` meets `.github/**`."""
    folded = unicodedata.normalize("NFKC", pattern).casefold()
    parts = [part if set(part) <= {".", "*", "?"} else part.rstrip(". ") for part in folded.split("/")]
    return "/".join(parts)


def _matches(path: str, pattern: str) -> bool:
    """Glob with `**` spanning directories; a pattern without wildcards also covers what is
    below it (`secrets` and `secrets/` protect `secrets/key.pem`). Every character of the path
    is matched, newlines included."""
    path = path.lstrip("/")
    if not any(c in pattern for c in "*?"):
        prefix = pattern.strip("/")
        return path == prefix or path.startswith(prefix + "/")
    return re.fullmatch(_glob_regex(pattern.lstrip("/")), path, re.DOTALL) is not None


def _glob_regex(pattern: str) -> str:
    regex, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            regex, i = regex + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            regex, i = regex + ".*", i + 2
        elif pattern[i] == "*":
            regex, i = regex + "[^/]*", i + 1
        elif pattern[i] == "?":
            regex, i = regex + "[^/]", i + 1
        else:
            regex, i = regex + re.escape(pattern[i]), i + 1
    return regex


def shadowed_by(path: str, patterns: Iterable[str]) -> str | None:
    """The protected pattern whose files a symlink at `path` would alias (`path` is, in any
    spelling, the pattern's folder or one above it), or None."""
    link = canonical(path)
    for pattern in patterns:
        literal = re.split(r"[*?]", canonical_pattern(pattern).lstrip("/"), maxsplit=1)[0]
        wild = any(c in pattern for c in "*?")
        folder = literal.rpartition("/")[0] if wild else literal.rstrip("/")
        if folder and link and (folder == link or folder.startswith(link + "/")):
            return pattern
    return None


def link_escapes(link_path: str, target: str) -> bool:
    """Whether a symlink at `link_path` (repository-relative) pointing at `target` leaves the
    repository or reaches `.git` on any checkout: absolute, a drive or UNC name, climbing above
    the root (`\\` and dot-and-space components count), or passing through any spelling of `.git`."""
    if forbidden_character(target) or not target:
        return True
    unified = target.replace("\\", "/")
    if unified.startswith("/") or _DRIVE.match(unified):
        return True
    stack: list[str] = []
    # the link's folder split on `/` only: the shallowest reading, where climbing out comes soonest
    for part in link_path.split("/")[:-1] + components(unified):
        name = ".." if part and set(part) <= {".", " "} and part != "." else canonical_component(part)
        if name in ("", "."):
            continue
        if name == "..":
            if not stack:
                return True
            stack.pop()
        elif is_git_name(name):
            return True
        else:
            stack.append(name)
    return False
