"""Admission: what a bridged call may touch and how much it may spend (docs/bridge.md).

An `Admission` is built from plain values (or `Admission.from_repo_config(worktree,
repo_config)`) and is consulted by the bridge before every effect:

    policy = Admission(worktree, protected=(".github/workflows/**",), max_calls=200)
    target = policy.admit_path("src/app.py")   # -> absolute host path, or raises Refusal
    policy.charge_call()                        # the call budget
    policy.charge_bytes(target, len(data))      # per-file and per-episode byte caps

Every refusal is a `Refusal(code, message)`: `code` is a short stable word for the
record ("outside", "bad_path", "git_dir", "protected", "budget", "too_large", "quota"...),
and `message` is written for the model, saying what to do instead. What a path's name may
be and what it really names (other spellings of `.git` and of protected folders) is decided
in bot/bridge/paths.py, for the requested path and for where it resolves alike.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from bot.errors import BotError
from bot.workspace import paths

if TYPE_CHECKING:
    from bot.workspace.repo_config import RepoConfig

DEFAULT_PROTECTED = (".github/workflows/**",)


class Refusal(BotError):
    """A call the policy does not admit; nothing was changed."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Admission:
    worktree: Path
    mount_path: str = "/workspace"  # the worktree's path as the agent sees it
    protected: tuple[str, ...] = DEFAULT_PROTECTED  # globs; `**` spans directories
    allow_protected: bool = False  # the operator lifted the protection for this episode
    max_file_bytes: int = 1 << 20
    max_episode_bytes: int = 16 << 20
    max_calls: int = 200
    run_timeout_s: float = 300.0
    max_output_bytes: int = 32 << 10
    run_allowed_hosts: tuple[str, ...] = ()  # package registries, when the repository allows
    calls: int = field(default=0, init=False)
    bytes_written: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.worktree = Path(self.worktree).resolve()

    @classmethod
    def from_repo_config(cls, worktree: Path, repo_config: RepoConfig, **overrides: Any) -> Admission:
        """The policy a repository's `.github/bot.yml` (bot.repo_config.RepoConfig) asks for."""
        values: dict[str, Any] = dict(protected=tuple(repo_config.protected_paths),
                                      run_timeout_s=min(repo_config.limits.timeout_s, cls.run_timeout_s),
                                      run_allowed_hosts=tuple(repo_config.registry_hosts()))
        return cls(worktree, **(values | overrides))

    def charge_call(self) -> None:
        """Count one bridged call against the budget."""
        if self.calls >= self.max_calls:
            raise Refusal("budget", f"call budget exhausted ({self.max_calls} calls per episode); "
                                    "finish with what you have and summarise.")
        self.calls += 1

    def charge_bytes(self, target: Path, size: int) -> None:
        """Admit `size` bytes for one file against the per-file and per-episode caps."""
        if size > self.max_file_bytes:
            raise Refusal("too_large", f"{self.relative(target)} would be {size} bytes; "
                                       f"the per-file cap is {self.max_file_bytes} bytes.")
        if self.bytes_written + size > self.max_episode_bytes:
            raise Refusal("quota", f"this episode may write at most {self.max_episode_bytes} bytes "
                                   f"in total; {self.bytes_written} are already written.")
        self.bytes_written += size

    def admit_path(self, requested: str) -> Path:
        """The host path for `requested` if the policy admits writing it, else raise Refusal."""
        relative = self._normalise(requested)
        target = (self.worktree / relative).resolve()
        if target == self.worktree or not target.is_relative_to(self.worktree):
            raise Refusal("outside", f"{requested!r} resolves outside the repository; "
                                     "use a path inside it, relative to its root.")
        resolved_relative = target.relative_to(self.worktree).as_posix()
        for candidate in {relative, resolved_relative}:
            self._check_name(requested, candidate)
        return target

    def admit_read(self, requested: str) -> str:
        """The worktree-relative path (`.` for the root) for a read, else raise Refusal: the
        rules of a write (inside the worktree, a plain name, never `.git` in any spelling) except
        that protected paths may be read. Nothing is resolved here: the reader walks the path
        without following any symlink (bot/bridge/reads.py)."""
        relative = self._normalise(requested)
        self._check_name(requested, relative, protected=False)
        return relative

    def relative(self, target: Path) -> str:
        return target.relative_to(self.worktree).as_posix()

    def _check_name(self, requested: str, candidate: str, protected: bool = True) -> None:
        """Refuse a (requested or resolved) relative path by its name: unsafe characters,
        dot-and-space components, git metadata or a protected file in any spelling."""
        shown = paths.printable(requested)
        if bad := paths.forbidden_character(candidate):
            raise Refusal("bad_path", f"{shown!r} holds {bad}, a control or invisible character; "
                                      "paths must be plain visible text.")
        if odd := paths.ambiguous_component(candidate):
            raise Refusal("bad_path", f"{shown!r} has a component made of dots and spaces ({odd!r}); "
                                      "use a real name.")
        if paths.is_git_metadata(candidate):
            raise Refusal("git_dir", f"{shown!r} is inside .git/ (in some spelling); git metadata is "
                                     "the bot's, not yours to change.")
        if protected and not self.allow_protected and paths.protected_by(candidate, self.protected):
            raise Refusal("protected", f"{shown!r} is a protected path in this repository "
                                       f"({', '.join(self.protected)}); do not change it.")

    def _normalise(self, requested: str) -> str:
        if not isinstance(requested, str) or not requested.strip():
            raise Refusal("bad_path", "path must be a non-empty string relative to the repository root.")
        if bad := paths.forbidden_character(requested):  # before strip(): `x.yml\n` is not `x.yml`
            raise Refusal("bad_path", f"{paths.printable(requested)!r} holds {bad}, a control or "
                                      "invisible character; paths must be plain visible text.")
        path = requested.strip()
        mount = self.mount_path.rstrip("/")
        if _under(path, mount):
            path = path[len(mount):].lstrip("/") or "."
        if os.path.isabs(path):
            raise Refusal("outside", f"{requested!r} is an absolute path outside the repository ({mount}).")
        if ".." in paths.components(path):  # `\` separates too, on a Windows checkout
            raise Refusal("outside", f"{requested!r} climbs out with '..'; use a path inside the repository.")
        return PurePosixPath(path).as_posix()


def _under(path: str, mount: str) -> bool:
    return path == mount or path.startswith(mount + "/")
